import { Type } from 'typebox';
import { type CardInput, validateCardInput } from '../cards/index.js';
import type { Ctx } from '../context.js';
import { ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';
import { enforced } from '../core/schema-check.js';
import { type CustomerRow, findCustomer, type NewCustomer, validateCustomer } from '../customers/index.js';
import type { Queryable } from '../db/db.js';
import { Text } from '../http/schemas.js';
import { checkPlanInput, type PlanChoice } from '../plans/index.js';

export const CUSTOMER_NOT_FOUND = "customer with this ID doesn't exist for this account";
export const CARD_NOT_FOUND = "card with this token doesn't exist for this account";

/** Why the shop cancels: the body of `POST /subscriptions/{id}/cancel`, also sent by the cabinet. */
export const CancelInput = enforced(Type.Object({ cancel_reason: Text({ maxLength: 1024 }) }));

export type CustomerChoice = { existing: CustomerRow } | { create: Omit<NewCustomer, 'id'> } | undefined;

export interface SubscriptionInput {
  plan: PlanChoice;
  customer: CustomerChoice;
  /** Absent in the redirect variant: the customer enters the card on the hosted page. */
  card: CardInput | undefined;
  trackingId: string | null;
  deviceId: string | null;
  returnUrl: string | null;
  notificationUrl: string | null;
  additionalData: Record<string, unknown>;
  receiptText: string[] | null;
  avsCvcVerification: Record<string, unknown> | null;
  settings: Record<string, unknown> | null;
  language: string;
  dynamicBillingDescriptor: string | null;
}

async function checkCustomer(
  ctx: Ctx,
  value: unknown,
  errors: ErrorCollector,
  db: Queryable,
): Promise<CustomerChoice> {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.add('customer', Msg.notObject);
    return undefined;
  }
  const body = value as Record<string, unknown>;
  if (body.id !== undefined && body.id !== null) {
    const row = typeof body.id === 'string' ? await findCustomer(db, ctx.shop.id, body.id) : undefined;
    if (!row) errors.add(['customer', 'base'], CUSTOMER_NOT_FOUND);
    return row && { existing: row };
  }
  return { create: validateCustomer(body, errors, ['customer']) };
}

/**
 * avs_cvc_verification is handed to the gateway with the first charge (`{avs_verification,
 * cvc_verification}`, each `{skip_verification, rejection_codes}`): a malformed one is refused here,
 * not by the gateway after the subscription exists. Other members are kept as given.
 */
function checkAvsCvc(f: Fields): Record<string, unknown> | null {
  const body = f.object('avs_cvc_verification');
  if (!body) return null;
  const outer = new Fields(body, f.errors, ['avs_cvc_verification']);
  for (const part of ['avs_verification', 'cvc_verification']) {
    const section = outer.object(part);
    if (!section) continue;
    const inner = new Fields(section, f.errors, ['avs_cvc_verification', part]);
    inner.boolean('skip_verification');
    const codes = section.rejection_codes;
    if (codes !== undefined && codes !== null) {
      inner.check(
        'rejection_codes',
        Array.isArray(codes) && codes.every((c) => typeof c === 'string'),
        'must be an array of strings',
      );
    }
  }
  return body;
}

/**
 * Validates a subscription request as a whole and reports every broken rule at once. A request with
 * a `card` is the card variant (a customer is then required); without one, the redirect variant.
 * Nothing is written here.
 */
export async function checkSubscriptionInput(
  ctx: Ctx,
  body: Record<string, unknown>,
  db: Queryable,
): Promise<SubscriptionInput> {
  const errors = new ErrorCollector();
  const f = new Fields(body, errors);
  const trackingId = f.textOrInteger('tracking_id', { max: 255 }) ?? null;
  const deviceId = f.string('device_id', { max: 255 }) ?? null;
  const returnUrl = f.url('return_url') ?? null;
  const notificationUrl = f.url('notification_url') ?? null;
  const additionalData = f.object('additional_data') ?? {};
  const avsCvcVerification = checkAvsCvc(f);
  const settings = f.object('settings') ?? null;
  const dynamicBillingDescriptor = f.string('dynamic_billing_descriptor', { max: 255 }) ?? null;
  let receiptText: string[] | null = null;
  if (f.has('receipt_text')) {
    const v = body.receipt_text;
    if (Array.isArray(v) && v.every((line) => typeof line === 'string' && line.length <= 1024))
      receiptText = v;
    else errors.add('receipt_text', 'must be an array of strings');
  }
  let language = f.language('language');
  if (settings && settings.language !== undefined && settings.language !== null) {
    const inSettings = new Fields(settings, errors, ['settings']).language('language');
    language ??= inSettings;
  }

  const customer = await checkCustomer(ctx, body.customer, errors, db);
  const cardGiven = body.card !== undefined && body.card !== null;
  // Whether a token exists is the gateway's to say: the service asks it when tokenizing.
  const card = cardGiven
    ? validateCardInput(body.card, errors, ['card'], { now: ctx.clock.now(), requireCvc: true })
    : undefined;
  if (cardGiven && (body.customer === undefined || body.customer === null)) errors.add('customer', Msg.blank);
  const plan = await checkPlanInput(ctx, body.plan, errors, db);

  errors.throwIfAny();
  return {
    plan: plan as PlanChoice,
    customer,
    card,
    trackingId,
    deviceId,
    returnUrl,
    notificationUrl,
    additionalData,
    receiptText,
    avsCvcVerification,
    settings,
    language: language ?? 'en',
    dynamicBillingDescriptor,
  };
}
