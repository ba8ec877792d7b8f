import { Type } from 'typebox';
import { FreeObject, Nullable, TrackingId } from '../http/schemas.js';

/** The gateway protocol's bodies, for the OpenAPI document and the serializer. */

const Str = Type.String();
const NStr = Nullable(Type.String());
const WholeNumber = (description: string) =>
  Type.Union([Type.Integer(), Type.String({ pattern: '^\\d+$' })], { description });

export const CreditCardInput = Type.Object(
  {
    number: Type.Optional(Type.String({ description: '12 to 19 digits, Luhn-valid' })),
    verification_value: Type.Optional(Type.String({ description: 'CVC: 3 or 4 digits; never stored' })),
    holder: Type.Optional(Type.String({ maxLength: 32 })),
    exp_month: Type.Optional(Type.String({ description: 'Two digits, 01 to 12' })),
    exp_year: Type.Optional(Type.String({ description: 'Four digits' })),
    token: Type.Optional(Type.String({ description: 'Replaces the fields above' })),
    skip_three_d_secure_verification: Type.Optional(Type.Boolean()),
  },
  { description: 'The full card, or a token (with verification_value when the cardholder gave it)' },
);

const ChargeRequest = Type.Object({
  amount: WholeNumber('Minor units, greater than 0'),
  currency: Type.String({ description: 'ISO 4217 alpha-3, or BTC, ETH, USDT, USDC' }),
  description: Type.String({ maxLength: 255 }),
  tracking_id: Type.Optional(TrackingId),
  language: Type.Optional(Type.String({ default: 'en' })),
  return_url: Type.Optional(
    Type.String({ format: 'uri', description: 'Where the cardholder returns after 3-D Secure' }),
  ),
  notification_url: Type.Optional(Type.String({ format: 'uri' })),
  test: Type.Optional(Type.Boolean()),
  duplicate_check: Type.Optional(
    Type.Boolean({
      default: true,
      description: 'Declines the same card, amount, currency and tracking_id within 30 s',
    }),
  ),
  credit_card: CreditCardInput,
  customer: Type.Optional(FreeObject),
  billing_address: Type.Optional(FreeObject),
  additional_data: Type.Optional(FreeObject),
  avs_cvc_verification: Type.Optional(FreeObject),
});

export const ChargeBody = Type.Object({ request: ChargeRequest });

export const ChildBody = Type.Object({
  request: Type.Object({
    parent_uid: Str,
    amount: Type.Optional(WholeNumber('Minor units; required except for a void')),
    reason: Type.Optional(Type.String({ maxLength: 255, description: 'Required for a refund' })),
    tracking_id: Type.Optional(TrackingId),
    duplicate_check: Type.Optional(
      Type.Boolean({ description: 'Refunds: declines the same parent and amount within 30 s' }),
    ),
  }),
});

export const TokenizeBody = Type.Object({
  request: Type.Object({
    number: Type.Optional(Str),
    holder: Type.Optional(Type.String({ maxLength: 32 })),
    exp_month: Type.Optional(Str),
    exp_year: Type.Optional(Str),
    token: Type.Optional(
      Type.String({ description: 'Updates holder and expiry of this card; keeps the token' }),
    ),
  }),
});

export const CardUpdateBody = Type.Object({
  request: Type.Object({
    holder: Type.Optional(Type.String({ maxLength: 32 })),
    exp_month: Type.Optional(Type.String({ description: 'Two digits, 01 to 12' })),
    exp_year: Type.Optional(Type.String({ description: 'Four digits; with exp_month, not past' })),
  }),
});

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
