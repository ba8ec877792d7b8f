import { isCalendarDate } from '../calendar/iso-instant.js';
import { type CardInput, CardMsg, validateCardInput } from '../cards/index.js';
import { checkAddress } from '../core/address.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { Fields, isEmail, isIpAddress, Msg } from '../core/rules.js';

/** Request parsing of the gateway verbs: the protocol's `request` object into checked values. */

export interface Customer {
  ip: string | null;
  email: string | null;
  device_id: string | null;
  birth_date: string | null;
}

export interface BillingAddress {
  first_name: string | null;
  last_name: string | null;
  address: string | null;
  country: string | null;
  city: string | null;
  zip: string | null;
  state: string | null;
  phone: string | null;
}

/** Result codes that decline the transaction when the acquirer returns them (`avs_cvc_verification`). */
export interface AvsCvcRules {
  avs: string[];
  cvc: string[];
}

export interface ChargeInput {
  amount: number;
  currency: string;
  description: string;
  trackingId: string | null;
  language: string;
  returnUrl: string | null;
  notificationUrl: string | null;
  test: boolean | undefined;
  duplicateCheck: boolean;
  skipThreeDs: boolean;
  card: CardInput;
  customer: Customer | null;
  billingAddress: BillingAddress | null;
  additionalData: Record<string, unknown>;
  avsCvcRules: AvsCvcRules;
}

export const InputMsg = {
  encryptedCard:
    'is not supported: send the card as credit_card (number, verification_value, holder, exp_month, exp_year) or its token',
} as const;

/** The `request` member every gateway body carries. */
export function requestOf(body: unknown): Record<string, unknown> {
  const request = (body as Record<string, unknown> | undefined)?.request;
  if (request === undefined || request === null) throw ApiError.validation({ request: [Msg.blank] });
  if (typeof request !== 'object' || Array.isArray(request))
    throw ApiError.validation({ request: [Msg.notObject] });
  return request as Record<string, unknown>;
}

function customerOf(f: Fields): Customer | null {
  const body = f.object('customer');
  if (!body) return null;
  const c = new Fields(body, f.errors, ['customer']);
  const ip = c.string('ip', { max: 45 });
  if (ip !== undefined) c.check('ip', isIpAddress(ip));
  const email = c.string('email', { max: 254 });
  if (email !== undefined) c.check('email', isEmail(email));
  const birth = c.string('birth_date', { max: 10 });
  if (birth !== undefined) c.check('birth_date', isCalendarDate(birth), 'must be YYYY-MM-DD');
  return {
    ip: ip ?? null,
    email: email ?? null,
    device_id: c.string('device_id', { max: 255 }) ?? null,
    birth_date: birth ?? null,
  };
}

function billingAddressOf(f: Fields): BillingAddress | null {
  const body = f.object('billing_address');
  if (!body) return null;
  const b = new Fields(body, f.errors, ['billing_address']);
  const text = (name: string, max = 255) => b.string(name, { max }) ?? null;
  // The shared address rules: the country in any case, a real state or province for the US and
  // Canada, kept in upper case. The gateway never refused a state elsewhere, nor a zip: neither does it now.
  const place: Record<string, string | undefined> = {
    country: b.string('country', { max: 2 }),
    state: b.string('state', { max: 32 }),
  };
  checkAddress(b, place);
  return {
    first_name: text('first_name'),
    last_name: text('last_name'),
    address: text('address'),
    country: place.country ?? null,
    city: text('city'),
    zip: text('zip', 16),
    state: place.state ?? null,
    phone: text('phone', 32),
  };
}

function rejectionCodes(f: Fields, part: 'avs_verification' | 'cvc_verification'): string[] {
  const body = f.object(part);
  if (!body) return [];
  const p = new Fields(body, f.errors, [...f.prefix, part]);
  if (p.boolean('skip_verification') === true) return [];
  const codes = body.rejection_codes;
  if (codes === undefined || codes === null) return [];
  if (!Array.isArray(codes) || !codes.every((c) => typeof c === 'string')) {
    p.check('rejection_codes', false, 'must be an array of strings');
    return [];
  }
  return codes as string[];
}

function avsCvcRulesOf(f: Fields): AvsCvcRules {
  const body = f.object('avs_cvc_verification');
  if (!body) return { avs: [], cvc: [] };
  const v = new Fields(body, f.errors, ['avs_cvc_verification']);
  return { avs: rejectionCodes(v, 'avs_verification'), cvc: rejectionCodes(v, 'cvc_verification') };
}

/** A payment, an authorization or a credit. Credits need no CVC. */
export function parseCharge(
  request: Record<string, unknown>,
  now: Date,
  opts: { requireCvc: boolean },
): ChargeInput {
  const errors = new ErrorCollector();
  const f = new Fields(request, errors);
  const amount = f.integer('amount', { required: true, exclusiveMin: 0 });
  const currency = f.currency('currency', { required: true });
  const description = f.string('description', { required: true, max: 255 });
  const trackingId = f.textOrInteger('tracking_id', { max: 255 }) ?? null;
  const language = f.language('language') ?? 'en';
  const returnUrl = f.url('return_url') ?? null;
  const notificationUrl = f.url('notification_url') ?? null;
  const test = f.boolean('test');
  const duplicateCheck = f.boolean('duplicate_check') ?? true;
  // The platform's client-side encrypted card needs the platform's keys; Kopek takes the card itself.
  if (request.encrypted_credit_card !== undefined && request.credit_card === undefined)
    throw ApiError.validation({ encrypted_credit_card: [InputMsg.encryptedCard] });
  const card = validateCardInput(request.credit_card, errors, ['credit_card'], {
    now,
    requireCvc: opts.requireCvc,
    expiredMessage: CardMsg.dateExpired,
  });
  const cardBody = request.credit_card as Record<string, unknown> | undefined;
  const skip = card
    ? new Fields(cardBody ?? {}, errors, ['credit_card']).boolean('skip_three_d_secure_verification')
    : false;
  const customer = customerOf(f);
  const billingAddress = billingAddressOf(f);
  const additionalData = f.object('additional_data') ?? {};
  const avsCvcRules = avsCvcRulesOf(f);
  errors.throwIfAny();
  return {
    amount: amount as number,
    currency: currency as string,
    description: description as string,
    trackingId,
    language,
    returnUrl,
    notificationUrl,
    test,
    duplicateCheck,
    skipThreeDs: skip === true,
    card: card as CardInput,
    customer,
    billingAddress,
    additionalData,
    avsCvcRules,
  };
}

export type ChildKind = 'capture' | 'void' | 'refund';

export interface ChildInput {
  parentUid: string;
  /** Absent only for a void, which then releases the whole authorization. */
  amount: number | undefined;
  reason: string | null;
  trackingId: string | null;
  duplicateCheck: boolean;
}

export function parseChild(request: Record<string, unknown>, kind: ChildKind): ChildInput {
  const errors = new ErrorCollector();
  const f = new Fields(request, errors);
  const parentUid = f.string('parent_uid', { required: true, max: 64 });
  const amount = f.integer('amount', { required: kind !== 'void', exclusiveMin: 0 });
  const reason = kind === 'refund' ? f.string('reason', { required: true, max: 255 }) : undefined;
  const trackingId = f.textOrInteger('tracking_id', { max: 255 }) ?? null;
  const duplicateCheck = f.boolean('duplicate_check') ?? true;
  errors.throwIfAny();
  return { parentUid: parentUid as string, amount, reason: reason ?? null, trackingId, duplicateCheck };
}
