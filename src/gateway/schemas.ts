import { type TSchema, Type } from 'typebox';
import { CardChanges, cardSchema, TokenizeCard } from '../cards/index.js';
import { addressProblems, stateMessage } from '../core/address.js';
import { Msg } from '../core/rules.js';
import { choice, enforced, type RuleCheck, unwrapErrors, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import { FreeObject, HttpUrl, Language, Nullable, Text, TrackingId, WholeNumber } from '../http/schemas.js';

/** The gateway protocol's bodies, for the OpenAPI document and the serializer. */

const Str = Type.String();
const NStr = Nullable(Type.String());

/** Text of at most `maxLength` characters, optional (null and "" count as absent). */
const Optional = (maxLength: number, options: Record<string, unknown> = {}) =>
  Type.Optional(Nullable(Type.String({ maxLength, ...options })));

export const InputMsg = {
  encryptedCard:
    'is not supported: send the card as credit_card (number, verification_value, holder, exp_month, exp_year) or its token',
} as const;

const cardOfCharge = (requireCvc: boolean) =>
  cardSchema({
    requireCvc,
    extra: { skip_three_d_secure_verification: Type.Optional(Nullable(Type.Boolean())) },
  });

const GatewayCustomer = Type.Object({
  ip: Optional(45, { format: 'ip' }),
  email: Optional(254, { format: 'email' }),
  device_id: Optional(255),
  birth_date: Optional(10, {
    format: 'calendar-date',
    description: 'YYYY-MM-DD',
    [MESSAGES]: { format: 'must be YYYY-MM-DD' },
  }),
});

/**
 * A US or Canadian state must be a real one (the shared address rules); the gateway never refused a
 * state of another country, nor a zip.
 */
function realState(address: Record<string, unknown>, check: RuleCheck): void {
  const { country, state } = address;
  if (!check.passed('country') || !check.passed('state')) return;
  if (typeof country !== 'string' || typeof state !== 'string' || country === '' || state === '') return;
  if (addressProblems({ country, state }).has('state')) check.add('state', stateMessage(country));
}

const BillingAddress = withRules(
  Type.Object({
    first_name: Optional(255),
    last_name: Optional(255),
    address: Optional(255),
    country: Optional(2, { format: 'country', description: 'ISO 3166-1 alpha-2, in any case' }),
    city: Optional(255),
    zip: Optional(16),
    state: Optional(32, { description: 'For the US and Canada, the code of a real state or province' }),
    phone: Optional(32),
  }),
  realState,
);

const STRINGS = 'must be an array of strings';
const RejectionRules = Type.Object({
  skip_verification: Type.Optional(Nullable(Type.Boolean())),
  rejection_codes: Type.Optional(
    Nullable(
      Type.Array(Type.String({ [MESSAGES]: { type: STRINGS } }), {
        description: 'Result codes of the acquirer that decline the transaction',
        [MESSAGES]: { type: STRINGS },
      }),
    ),
  ),
});

/**
 * A card is required; the platform's client-side encrypted card is not supported (it needs the
 * platform's keys), and is named as such when it comes instead.
 */
function cardRequired(request: Record<string, unknown>, check: RuleCheck): void {
  const absent = (v: unknown) => v === undefined || v === null;
  if (!absent(request.credit_card) || !check.passed('credit_card')) return;
  if (request.encrypted_credit_card !== undefined) check.add('encrypted_credit_card', InputMsg.encryptedCard);
  else check.add('credit_card', Msg.blank);
}

/** `{"request": {...}}` of a payment, an authorization (CVC required with a full card) or a credit. */
const chargeBody = (requireCvc: boolean) =>
  enforced(
    Type.Object({
      request: unwrapErrors(
        withRules(
          Type.Object({
            amount: WholeNumber({ exclusiveMinimum: 0, description: 'Minor units, greater than 0' }),
            currency: Text({ format: 'currency', description: 'ISO 4217 alpha-3, or BTC, ETH, USDT, USDC' }),
            description: Text({ maxLength: 255 }),
            tracking_id: Type.Optional(TrackingId),
            language: Type.Optional(Nullable(Language())),
            return_url: Type.Optional(
              Nullable(HttpUrl({ description: 'Where the cardholder returns after 3-D Secure' })),
            ),
            notification_url: Type.Optional(Nullable(HttpUrl())),
            test: Type.Optional(Nullable(Type.Boolean())),
            duplicate_check: Type.Optional(
              Nullable(
                Type.Boolean({
                  default: true,
                  description: 'Declines the same card, amount, currency and tracking_id within 30 s',
                }),
              ),
            ),
            encrypted_credit_card: Type.Optional(
              Type.Unknown({ description: 'Not supported: send credit_card instead' }),
            ),
            credit_card: Type.Optional(cardOfCharge(requireCvc)),
            customer: Type.Optional(Nullable(GatewayCustomer)),
            billing_address: Type.Optional(Nullable(BillingAddress)),
            additional_data: Type.Optional(Nullable(FreeObject)),
            avs_cvc_verification: Type.Optional(
              Nullable(
                Type.Object({
                  avs_verification: Type.Optional(Nullable(RejectionRules)),
                  cvc_verification: Type.Optional(Nullable(RejectionRules)),
                }),
              ),
            ),
          }),
          cardRequired,
        ),
      ),
    }),
  );

/** Payments and authorizations: the CVC is required with a full card number. */
export const ChargeBody = chargeBody(true);
/** Credits send money to the card: no CVC needed. */
export const CreditBody = chargeBody(false);

export type ChildKind = 'capture' | 'void' | 'refund';

/** A capture, a void or a refund of `parent_uid`; a void may omit the amount, a refund needs a reason. */
const childBody = (kind: ChildKind) =>
  enforced(
    Type.Object({
      request: unwrapErrors(
        Type.Object({
          parent_uid: Text({ maxLength: 64 }),
          amount: (kind === 'void' ? (s: TSchema) => Type.Optional(Nullable(s)) : (s: TSchema) => s)(
            WholeNumber({
              exclusiveMinimum: 0,
              description:
                kind === 'void' ? 'Minor units; the whole authorization when absent' : 'Minor units',
            }),
          ),
          ...(kind === 'refund' ? { reason: Text({ maxLength: 255 }) } : {}),
          tracking_id: Type.Optional(TrackingId),
          duplicate_check: Type.Optional(
            Nullable(
              Type.Boolean({
                default: true,
                description: 'Declines the same parent and amount within 30 s',
              }),
            ),
          ),
        }),
      ),
    }),
  );

export const ChildBodies: Record<ChildKind, TSchema> = {
  capture: childBody('capture'),
  void: childBody('void'),
  refund: childBody('refund'),
};

/** The card given as `credit_card` inside `request`, rather than flat in it. */
const NESTED_CARD = {
  type: 'object',
  required: ['credit_card'],
  properties: { credit_card: { type: 'object' } },
};

/**
 * The platform's clients send the card's fields flat in `request`; a `credit_card` object inside
 * it is taken instead, its errors then named under `credit_card`.
 */
const cardRequest = (card: TSchema, description: string) =>
  enforced(
    Type.Object({
      request: unwrapErrors(choice(NESTED_CARD, Type.Object({ credit_card: card }), card, { description })),
    }),
  );

export const TokenizeBody = cardRequest(
  TokenizeCard,
  'A full card for a new token, or a token with a new holder or expiry (its number never changes)',
);

export const CardUpdateBody = cardRequest(
  CardChanges,
  'A new holder or expiry; with both, not past. The number never changes; a token here is not read',
);

export const CardRecordSchema = Type.Object({
  holder: Str,
  stamp: Type.String({ description: 'Keyed hash of the number: equal for every token of one card' }),
  brand: Str,
  last_4: Str,
  first_1: Str,
  bin: Str,
  issuer_country: NStr,
  issuer_name: NStr,
  product: NStr,
  token: Str,
  token_provider: NStr,
  exp_month: Type.Integer(),
  exp_year: Type.Integer(),
});

const CustomerSchema = Type.Object({ ip: NStr, email: NStr, device_id: NStr, birth_date: NStr });
const BillingAddressSchema = Type.Object({
  first_name: NStr,
  last_name: NStr,
  address: NStr,
  country: NStr,
  city: NStr,
  zip: NStr,
  state: NStr,
  phone: NStr,
});
const ResultCode = Type.Object({ result_code: Str });
const AvsCvcSchema = Type.Object({ avs_verification: ResultCode, cvc_verification: ResultCode });
const ThreeDSecureSchema = Type.Object({
  status: Type.String({ description: 'pending, successful or failed' }),
  message: NStr,
  ve_status: Str,
  pa_status: NStr,
  eci: NStr,
  xid: NStr,
  cavv: NStr,
  cavv_algorithm: NStr,
  fail_reason: NStr,
});

const Section = Type.Object({
  status: Str,
  message: NStr,
  ref_id: NStr,
  gateway_id: Nullable(Type.Integer()),
  rrn: NStr,
  auth_code: NStr,
  bank_code: NStr,
  billing_descriptor: NStr,
  amount: Type.Integer(),
  currency: Str,
});

export const TransactionSchema = Type.Object(
  {
    uid: Str,
    status: Type.String({ description: 'successful, failed, incomplete, error or pending' }),
    message: NStr,
    amount: Type.Integer(),
    currency: Str,
    description: NStr,
    type: Str,
    payment_method_type: Str,
    tracking_id: NStr,
    test: Type.Boolean(),
    language: NStr,
    created_at: Str,
    updated_at: Str,
    paid_at: NStr,
    expired_at: Type.Null(),
    closed_at: Type.Null(),
    settled_at: Type.Null(),
    parent_uid: Type.Optional(Str),
    reason: Type.Optional(Str),
    credit_card: Nullable(CardRecordSchema),
    customer: Type.Optional(CustomerSchema),
    billing_address: Type.Optional(BillingAddressSchema),
    additional_data: FreeObject,
    avs_cvc_verification: Type.Optional(AvsCvcSchema),
    three_d_secure_verification: Type.Optional(ThreeDSecureSchema),
    redirect_url: Type.Optional(
      Type.String({ description: 'Only when incomplete: send the cardholder here' }),
    ),
    payment: Type.Optional(Section),
    authorization: Type.Optional(Section),
    capture: Type.Optional(Section),
    void: Type.Optional(Section),
    refund: Type.Optional(Section),
    credit: Type.Optional(Section),
  },
  { additionalProperties: true },
);

export const TransactionEnvelope = Type.Object({ transaction: TransactionSchema });
export const TransactionsEnvelope = Type.Object({ transactions: Type.Array(TransactionSchema) });

export const GatewayError = Type.Object(
  {
    response: Type.Object({
      message: Str,
      errors: Type.Record(Type.String(), Type.Unknown()),
    }),
  },
  { description: 'The error body of the gateway: {message, errors} wrapped in response' },
);

/**
 * 504: the acquirer did not answer in time. The pending transaction's uid (and the request's
 * tracking_id) come along, so a client that sent no tracking_id can still query it.
 */
export const GatewayTimeoutError = Type.Object(
  {
    response: Type.Object({
      message: Str,
      errors: Type.Record(Type.String(), Type.Unknown()),
      uid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      tracking_id: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  {
    description:
      'The acquirer did not answer in time: the outcome is unknown until the transaction is queried',
  },
);

export const gatewayErrors = {
  401: GatewayError,
  404: GatewayError,
  409: GatewayError,
  422: GatewayError,
  429: GatewayError,
} as const;
