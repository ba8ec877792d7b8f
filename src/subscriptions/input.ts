import { Type } from 'typebox';
import { type CardInput, cardSchema, validateCardInput } from '../cards/index.js';
import type { Ctx } from '../context.js';
import { ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';
import { checkBody, choice, enforced, type RuleCheck, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import {
  CustomerInput,
  type CustomerRow,
  findCustomer,
  type NewCustomer,
  validateCustomer,
} from '../customers/index.js';
import type { Queryable } from '../db/db.js';
import { FreeObject, HttpUrl, Language, Nullable, Text, TrackingId } from '../http/schemas.js';
import { checkPlanInput, type PlanChoice, PlanInput } from '../plans/index.js';

const STRINGS = 'must be an array of strings';

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

/** The customer member, once its schema held: the shop's customer by id, or a new one. */
async function checkCustomer(
  ctx: Ctx,
  value: unknown,
  errors: ErrorCollector,
  db: Queryable,
): Promise<CustomerChoice> {
  if (value === undefined || value === null) return undefined;
  const body = value as Record<string, unknown>;
  if (body.id !== undefined && body.id !== null) {
    const row = typeof body.id === 'string' ? await findCustomer(db, ctx.shop.id, body.id) : undefined;
    if (!row) errors.add(['customer', 'base'], CUSTOMER_NOT_FOUND);
    return row && { existing: row };
  }
  return { create: validateCustomer(body, errors, ['customer']) };
}

/** A member given by the id of a stored object rather than in full: `{id}`. */
const GIVEN_BY_ID = { type: 'object', required: ['id'], properties: { id: { not: { type: 'null' } } } };

const RejectionRules = Type.Object({
  skip_verification: Type.Optional(Nullable(Type.Boolean())),
  rejection_codes: Type.Optional(
    Nullable(
      Type.Array(Type.String({ [MESSAGES]: { type: STRINGS } }), {
        description: 'Result codes that decline the first charge',
        [MESSAGES]: { type: STRINGS },
      }),
    ),
  ),
});

/** In the card variant a customer is required; the redirect variant asks the buyer on the hosted page. */
function customerWithCard(body: Record<string, unknown>, check: RuleCheck): void {
  const absent = (v: unknown) => v === undefined || v === null;
  if (!absent(body.card) && absent(body.customer) && check.passed('customer'))
    check.add('customer', Msg.blank);
}

/**
 * `POST /subscriptions`. The schema states every rule of one field (in the order they are reported);
 * `plan` and `customer` are an `{id}` of the shop's or one given in full, as `POST /plans` and
 * `POST /customers` take it. What only the store or the clock can say stays as code: whether an id
 * is the shop's (checkSubscriptionInput), whether the card has expired (validateCardInput).
 */
export const SubscriptionInputSchema = enforced(
  withRules(
    Type.Object({
      tracking_id: Type.Optional(TrackingId),
      device_id: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      return_url: Type.Optional(Nullable(HttpUrl())),
      notification_url: Type.Optional(Nullable(HttpUrl())),
      additional_data: Type.Optional(Nullable(FreeObject)),
      avs_cvc_verification: Type.Optional(
        Nullable(
          Type.Object(
            {
              avs_verification: Type.Optional(Nullable(RejectionRules)),
              cvc_verification: Type.Optional(Nullable(RejectionRules)),
            },
            { description: 'Handed to the gateway with the first charge; other members are kept as given' },
          ),
        ),
      ),
      dynamic_billing_descriptor: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
      receipt_text: Type.Optional(
        Nullable(
          Type.Array(Type.String({ maxLength: 1024, [MESSAGES]: { type: STRINGS, maxLength: STRINGS } }), {
            description: 'Lines of at most 1024 characters',
            [MESSAGES]: { type: STRINGS },
          }),
        ),
      ),
      language: Type.Optional(Nullable(Language())),
      settings: Type.Optional(
        Nullable(
          Type.Object(
            {
              language: Type.Optional(Nullable(Language({ description: 'Used when language is not given' }))),
            },
            { description: 'Kept as given' },
          ),
        ),
      ),
      customer: Type.Optional(
        choice(GIVEN_BY_ID, Type.Object({ id: Type.String() }), CustomerInput, {
          description: 'A customer of the shop by its id, or a new one; required with a card',
        }),
      ),
      card: Type.Optional(cardSchema({ requireCvc: true })),
      plan: choice(GIVEN_BY_ID, Type.Object({ id: Type.String() }), PlanInput, {
        description: 'A plan of the shop by its id, or a new one',
      }),
    }),
    customerWithCard,
  ),
);

/**
 * Validates a subscription request as a whole (SubscriptionInputSchema, then the ids against the
 * store) and reports every broken rule at once. A request with a `card` is the card variant (a
 * customer is then required); without one, the redirect variant. Nothing is written here.
 */
export async function checkSubscriptionInput(
  ctx: Ctx,
  body: Record<string, unknown>,
  db: Queryable,
): Promise<SubscriptionInput> {
  const errors = new ErrorCollector();
  if (!checkBody(SubscriptionInputSchema, body, errors)) errors.throwIfAny();
  const customer = await checkCustomer(ctx, body.customer, errors, db);
  // Whether a token exists is the gateway's to say: the service asks it when tokenizing.
  const card =
    body.card === undefined || body.card === null
      ? undefined
      : validateCardInput(body.card, errors, ['card'], { now: ctx.clock.now(), requireCvc: true });
  const plan = await checkPlanInput(ctx, body.plan, errors, db);
  errors.throwIfAny();
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  const object = (v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  const settings = object(body.settings);
  return {
    plan: plan as PlanChoice,
    customer,
    card,
    trackingId: typeof body.tracking_id === 'number' ? String(body.tracking_id) : text(body.tracking_id),
    deviceId: text(body.device_id),
    returnUrl: text(body.return_url),
    notificationUrl: text(body.notification_url),
    additionalData: object(body.additional_data) ?? {},
    receiptText: Array.isArray(body.receipt_text) ? (body.receipt_text as string[]) : null,
    avsCvcVerification: object(body.avs_cvc_verification),
    settings,
    language: text(body.language) ?? text(settings?.language) ?? 'en',
    dynamicBillingDescriptor: text(body.dynamic_billing_descriptor),
  };
}
