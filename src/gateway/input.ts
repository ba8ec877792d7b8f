import type { TSchema } from 'typebox';
import { type CardInput, CardMsg, validateCardInput } from '../cards/index.js';
import { addressCode, hasStates } from '../core/address.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';
import { checkBody } from '../core/schema-check.js';
import { ChargeBody, ChildBodies, type ChildKind, CreditBody } from './schemas.js';

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

export { InputMsg } from './schemas.js';

/** The `request` member every gateway body carries. */
export function requestOf(body: unknown): Record<string, unknown> {
  const request = (body as Record<string, unknown> | undefined)?.request;
  if (request === undefined || request === null) throw ApiError.validation({ request: [Msg.blank] });
  if (typeof request !== 'object' || Array.isArray(request))
    throw ApiError.validation({ request: [Msg.notObject] });
  return request as Record<string, unknown>;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const member = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

function customerOf(request: Record<string, unknown>): Customer | null {
  const c = member(request.customer);
  if (!c) return null;
  return {
    ip: text(c.ip),
    email: text(c.email),
    device_id: text(c.device_id),
    birth_date: text(c.birth_date),
  };
}

function billingAddressOf(request: Record<string, unknown>): BillingAddress | null {
  const b = member(request.billing_address);
  if (!b) return null;
  // The country in any case, a US or Canadian state too, kept in upper case.
  const country = text(b.country) === null ? null : addressCode(b.country as string);
  const state = text(b.state);
  return {
    first_name: text(b.first_name),
    last_name: text(b.last_name),
    address: text(b.address),
    country,
    city: text(b.city),
    zip: text(b.zip),
    state: state !== null && hasStates(country) ? addressCode(state) : state,
    phone: text(b.phone),
  };
}

function rejectionCodes(rules: Record<string, unknown> | null): string[] {
  if (!rules || rules.skip_verification === true) return [];
  return Array.isArray(rules.rejection_codes) ? (rules.rejection_codes as string[]) : [];
}

function avsCvcRulesOf(request: Record<string, unknown>): AvsCvcRules {
  const body = member(request.avs_cvc_verification);
  return {
    avs: rejectionCodes(member(body?.avs_verification)),
    cvc: rejectionCodes(member(body?.cvc_verification)),
  };
}

/**
 * The request's own fields against the `request` schema of `body` (not checked again when the route
 * checked them), thrown as the gateway's 422 when broken.
 */
function check(body: TSchema, request: Record<string, unknown>): void {
  const errors = new ErrorCollector();
  const schema = (body as unknown as { properties: { request: TSchema } }).properties.request;
  if (!checkBody(schema, request, errors)) errors.throwIfAny();
}

/**
 * A payment, an authorization or a credit (credits need no CVC): the body's schema (ChargeBody,
 * CreditBody), then the card's expiry against the shop's clock.
 */
export function parseCharge(
  request: Record<string, unknown>,
  now: Date,
  opts: { requireCvc: boolean },
): ChargeInput {
  // The body's rules and the card's in one answer: a mistyped number does not hide an expired card.
  const errors = new ErrorCollector();
  const body = opts.requireCvc ? ChargeBody : CreditBody;
  checkBody((body as unknown as { properties: { request: TSchema } }).properties.request, request, errors);
  const card = validateCardInput(request.credit_card, errors, ['credit_card'], {
    now,
    requireCvc: opts.requireCvc,
    expiredMessage: CardMsg.dateExpired,
  });
  errors.throwIfAny();
  const trackingId = request.tracking_id;
  const flag = (v: unknown, otherwise: boolean) => (typeof v === 'boolean' ? v : otherwise);
  return {
    amount: request.amount as number,
    currency: request.currency as string,
    description: request.description as string,
    trackingId: typeof trackingId === 'number' ? String(trackingId) : text(trackingId),
    language: text(request.language) ?? 'en',
    returnUrl: text(request.return_url),
    notificationUrl: text(request.notification_url),
    test: typeof request.test === 'boolean' ? request.test : undefined,
    duplicateCheck: flag(request.duplicate_check, true),
    skipThreeDs: member(request.credit_card)?.skip_three_d_secure_verification === true,
    card: card as CardInput,
    customer: customerOf(request),
    billingAddress: billingAddressOf(request),
    additionalData: member(request.additional_data) ?? {},
    avsCvcRules: avsCvcRulesOf(request),
  };
}

export type { ChildKind } from './schemas.js';

export interface ChildInput {
  parentUid: string;
  /** Absent only for a void, which then releases the whole authorization. */
  amount: number | undefined;
  reason: string | null;
  trackingId: string | null;
  duplicateCheck: boolean;
}

/** A capture, a void or a refund: the body's schema (ChildBodies) says every rule. */
export function parseChild(request: Record<string, unknown>, kind: ChildKind): ChildInput {
  check(ChildBodies[kind], request);
  const trackingId = request.tracking_id;
  return {
    parentUid: request.parent_uid as string,
    amount: typeof request.amount === 'number' ? request.amount : undefined,
    reason: kind === 'refund' ? text(request.reason) : null,
    trackingId: typeof trackingId === 'number' ? String(trackingId) : text(trackingId),
    duplicateCheck: typeof request.duplicate_check === 'boolean' ? request.duplicate_check : true,
  };
}
