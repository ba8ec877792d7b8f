import type { ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';

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

const EXPIRY =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|([+-])(\d{2}):(\d{2})))?$/;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/**
 * `YYYY-MM-DDThh:mm:ssTZD` (TZD is Z, +hh:mm or -hh:mm) or a date alone, which means the end of
 * that day in UTC. Fractional seconds are accepted too, because `Date.toISOString()` writes them.
 * Returns undefined for anything else, including dates the calendar does not have (Feb 30).
 */
export function parseExpiry(text: string): Date | undefined {
  const m = EXPIRY.exec(text);
  if (!m) return undefined;
  const n = (i: number) => Number(m[i] ?? 0);
  const [year, month, day] = [n(1), n(2), n(3)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  const at = new Date(0);
  if (m[4] === undefined) {
    at.setUTCFullYear(year, month - 1, day);
    at.setUTCHours(23, 59, 59, 999);
    return at;
  }
  const [hour, minute, second] = [n(4), n(5), n(6)];
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const [offsetHours, offsetMinutes] = [n(10), n(11)];
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const millis = Number((m[7] ?? '0').padEnd(3, '0'));
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, millis);
  const sign = m[9] === '-' ? -1 : 1;
  return new Date(at.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
}

const present = (v: unknown) => v !== undefined && v !== null;

function visibleFields(f: Fields, body: Record<string, unknown>): string[] {
  // `visible` is the platform's other name for the field; errors name the field the shop sent.
  const field = present(body.visible_fields)
    ? 'visible_fields'
    : present(body.visible)
      ? 'visible'
      : undefined;
  if (field === undefined) return [];
  const value = body[field];
  if (!Array.isArray(value)) {
    f.check(field, false, Msg.notArray);
    return [];
  }
  const known = VISIBLE_FIELDS as readonly unknown[];
  if (
    !f.check(
      field,
      value.every((v) => known.includes(v)),
      Msg.notIncluded,
    )
  )
    return [];
  return [...new Set(value as string[])];
}

/** Stock: unlimited unless a quantity is given or `infinite: false` says otherwise. */
function stock(f: Fields, errors: ErrorCollector): { quantity: number | null; infinite: boolean } {
  const quantity = f.integer('quantity', { min: 0 });
  const infiniteGiven = f.boolean('infinite');
  const infinite = infiniteGiven ?? !f.has('quantity');
  if (infinite) return { quantity: null, infinite };
  if (quantity === undefined && !errors.has('quantity') && !errors.has('infinite')) {
    f.check('quantity', false, Msg.blank);
  }
  return { quantity: quantity ?? null, infinite };
}

function shopIdMatches(value: unknown, shopId: number): boolean {
  return (typeof value === 'string' || typeof value === 'number') && String(value).trim() === String(shopId);
}

/**
 * Validates a whole product (a create request, or a stored product with an update laid over it)
 * and returns it normalised. Every broken rule is recorded in `errors`, not only the first.
 */
export function validateProduct(
  body: Record<string, unknown>,
  shopId: number,
  errors: ErrorCollector,
): ProductData {
  const f = new Fields(body, errors);
  const name = f.string('name', { required: true, max: 255 });
  const description = f.string('description', { required: true, max: 2000 });
  const currency = f.currency('currency', { required: true });
  const amount = f.integer('amount', { required: true, exclusiveMin: 0 });
  const { quantity, infinite } = stock(f, errors);
  const visible = visibleFields(f, body);
  const test = f.boolean('test') ?? false;
  const immortal = f.boolean('immortal') ?? false;
  const expiredAt = f.string('expired_at', { max: 64 }) ?? null;
  const expiresAt = expiredAt === null ? null : (parseExpiry(expiredAt) ?? null);
  if (expiredAt !== null) f.check('expired_at', expiresAt !== null);
  const returnUrl = f.url('return_url') ?? null;
  const language = f.language('language') ?? 'en';
  const transactionType = f.oneOf('transaction_type', TRANSACTION_TYPES) ?? 'payment';
  if (present(body.shop_id)) f.check('shop_id', shopIdMatches(body.shop_id, shopId));
  const additionalData = f.object('additional_data') ?? {};

  const extra: Record<string, unknown> = {};
  for (const field of KEPT_PLATFORM_FIELDS) if (present(body[field])) extra[field] = body[field];

  return {
    name: name ?? '',
    description: description ?? '',
    currency: currency ?? '',
    amount: amount ?? 0,
    quantity,
    infinite,
    visible_fields: visible,
    test,
    immortal,
    expired_at: expiredAt,
    expires_at: expiresAt,
    return_url: returnUrl,
    language,
    transaction_type: transactionType,
    additional_data: additionalData,
    extra,
  };
}
