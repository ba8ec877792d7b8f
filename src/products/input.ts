import { Type } from 'typebox';
import { parseInstant } from '../calendar/iso-instant.js';
import type { ErrorCollector } from '../core/errors.js';
import { LANGUAGES, Msg } from '../core/rules.js';
import { addFormat, checkBody, enforced, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
import { FreeObject, Nullable, Text, WholeNumber } from '../http/schemas.js';

/** Buyer fields a product can ask for on its payment page (the platform's list). */
export const VISIBLE_FIELDS = [
  'first_name',
  'last_name',
  'country',
  'state',
  'city',
  'address',
  'zip',
  'phone',
  'birth_date',
  'email',
  'taxpayer_id',
] as const;

export const TRANSACTION_TYPES = ['payment', 'authorization'] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/**
 * Product fields the platform documents that Kopek does not act on: kept in `extra` so a shop's
 * existing integration keeps working and can read them later (decisions.md, compatibility).
 */
export const KEPT_PLATFORM_FIELDS = [
  'success_url',
  'fail_url',
  'decline_url',
  'cancel_url',
  'notification_url',
] as const;

/** A product's data after validation: what the table stores besides id, shop and timestamps. */
export interface ProductData {
  name: string;
  description: string;
  currency: string;
  amount: number;
  quantity: number | null;
  infinite: boolean;
  visible_fields: string[];
  test: boolean;
  immortal: boolean;
  /** The string the shop sent, returned as given. */
  expired_at: string | null;
  /** The instant expired_at names, for deciding whether the product can still be paid. */
  expires_at: Date | null;
  return_url: string | null;
  language: string;
  transaction_type: TransactionType;
  additional_data: Record<string, unknown>;
  extra: Record<string, unknown>;
}

/**
 * `YYYY-MM-DDThh:mm:ssTZD` (TZD is Z, +hh:mm or +hhmm) or a date alone, which means the end of
 * that day in UTC; the years 1–9999 and the days the calendar has (the shared reading of dates).
 */
export const parseExpiry = (text: string): Date | undefined =>
  parseInstant(text, { dateAlone: 'end-of-day-utc' });

addFormat('product-expiry', (text) => parseExpiry(text) !== undefined);

const present = (v: unknown) => v !== undefined && v !== null;
const optional = <T extends Parameters<typeof Nullable>[0]>(t: T) => Type.Optional(Nullable(t));
const VisibleFields = (description: string) => Type.Array(Type.Enum(VISIBLE_FIELDS), { description });

/**
 * Stock is unlimited unless a quantity is given or `infinite: false` says otherwise; a finite stock
 * needs its quantity.
 */
function stockNeedsQuantity(
  product: Record<string, unknown>,
  check: { passed(f: string): boolean; add(f: string, m: string): void },
) {
  const infinite = present(product.infinite) ? product.infinite === true : !present(product.quantity);
  if (!infinite && !present(product.quantity) && check.passed('quantity') && check.passed('infinite'))
    check.add('quantity', Msg.blank);
}

/** A create request, and a stored product with an update laid over it: every rule of a product. */
export const ProductInput = enforced(
  withRules(
    Type.Object({
      name: Text({ maxLength: 255 }),
      description: Text({ maxLength: 2000 }),
      currency: Text({ format: 'currency', description: 'ISO 4217 alpha-3 code, or BTC, ETH, USDT, USDC' }),
      amount: WholeNumber({ exclusiveMinimum: 0, description: 'Price in minor units' }),
      quantity: optional(
        WholeNumber({ minimum: 0, description: 'Units in stock; omit when infinite is true' }),
      ),
      infinite: optional(
        Type.Boolean({ description: 'Unlimited stock; the default when no quantity is sent' }),
      ),
      visible_fields: optional(VisibleFields('Buyer fields shown, and required, on the payment page')),
      visible: optional(VisibleFields('Another name for visible_fields')),
      test: optional(Type.Boolean()),
      immortal: optional(Type.Boolean({ description: 'Unlimited time to pay' })),
      expired_at: optional(
        Type.String({
          maxLength: 64,
          format: 'product-expiry',
          description:
            'YYYY-MM-DDThh:mm:ssTZD (TZD: Z, +hh:mm or +hhmm) or YYYY-MM-DD (end of that day, UTC); in the future, years 1–9999',
        }),
      ),
      return_url: optional(
        Type.String({
          maxLength: 2048,
          format: 'http-url',
          description: 'Where the buyer goes after paying; the shop URL when absent',
          [MESSAGES]: { format: 'must be an absolute http(s) URL' },
        }),
      ),
      language: optional(Type.Enum(LANGUAGES, { type: 'string', default: 'en' })),
      transaction_type: optional(Type.Enum(TRANSACTION_TYPES, { type: 'string', default: 'payment' })),
      shop_id: optional(Type.Union([Type.Integer(), Type.String()], { description: 'Must be your shop id' })),
      additional_data: optional(FreeObject),
      ...Object.fromEntries(
        KEPT_PLATFORM_FIELDS.map((f) => [
          f,
          Type.Optional(
            Type.Unknown({ description: 'Accepted and kept as given; Kopek does not act on it' }),
          ),
        ]),
      ),
    }),
    stockNeedsQuantity,
  ),
);

/** An update: any subset of the fields; the product it makes is then checked whole. */
export const ProductUpdate = enforced(Type.Partial(ProductInput));

function shopIdMatches(value: unknown, shopId: number): boolean {
  return (typeof value === 'string' || typeof value === 'number') && String(value).trim() === String(shopId);
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const flag = (v: unknown, otherwise: boolean): boolean => (typeof v === 'boolean' ? v : otherwise);

/**
 * Checks a whole product (a create request, or a stored product with an update laid over it)
 * against ProductInput and the shop, and returns it normalised. Every broken rule is recorded in
 * `errors`; the data is meaningful only when nothing was recorded. `newExpiryAfter` is the shop's
 * now when the request gives an expiry (it must lie after it), null when it keeps the stored one.
 */
export function validateProduct(
  body: Record<string, unknown>,
  shopId: number,
  errors: ErrorCollector,
  newExpiryAfter: Date | null,
): ProductData {
  const valid = checkBody(ProductInput, body, errors);
  // A product that expires before anyone could pay for it is a mistake; a stored one that has
  // expired since may still be edited (its other fields), so only an expiry given now is checked.
  if (valid && newExpiryAfter && typeof body.expired_at === 'string') {
    const at = parseExpiry(body.expired_at);
    if (at && at.getTime() <= newExpiryAfter.getTime()) errors.add('expired_at', 'must be in the future');
  }
  if (present(body.shop_id) && !shopIdMatches(body.shop_id, shopId)) errors.add('shop_id', Msg.invalid);
  // `visible` is the platform's other name for the field.
  const visible = present(body.visible_fields) ? body.visible_fields : body.visible;
  const quantity = typeof body.quantity === 'number' ? body.quantity : null;
  const infinite = flag(body.infinite, !present(body.quantity));
  const expiredAt = text(body.expired_at);
  const extra: Record<string, unknown> = {};
  for (const field of KEPT_PLATFORM_FIELDS) if (present(body[field])) extra[field] = body[field];
  return {
    name: text(body.name) ?? '',
    description: text(body.description) ?? '',
    currency: text(body.currency) ?? '',
    amount: typeof body.amount === 'number' ? body.amount : 0,
    quantity: infinite ? null : quantity,
    infinite,
    visible_fields: Array.isArray(visible) ? [...new Set(visible as string[])] : [],
    test: flag(body.test, false),
    immortal: flag(body.immortal, false),
    expired_at: expiredAt,
    expires_at: expiredAt === null ? null : (parseExpiry(expiredAt) ?? null),
    return_url: text(body.return_url),
    language: text(body.language) ?? 'en',
    transaction_type: (text(body.transaction_type) as TransactionType | null) ?? 'payment',
    additional_data: (typeof body.additional_data === 'object' && body.additional_data
      ? body.additional_data
      : {}) as Record<string, unknown>,
    extra,
  };
}
