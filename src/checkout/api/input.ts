import { isCalendarDate, parseInstant } from '../../calendar/iso-instant.js';
import { checkAddress } from '../../core/address.js';
import { ApiError, ErrorCollector } from '../../core/errors.js';
import { Fields, isEmail, isIpAddress, Msg } from '../../core/rules.js';
import { CUSTOMER_FIELD_NAMES } from '../form-errors.js';

/** `POST /ctp/api/checkouts`: the platform's `checkout` object, checked field by field. */

export const TRANSACTION_TYPES = ['payment', 'authorization', 'tokenization'] as const;
export type CtpTransactionType = (typeof TRANSACTION_TYPES)[number];

export interface CtpOrder {
  amount: number;
  currency: string;
  description: string;
  tracking_id: string | null;
  expired_at: string | null;
  additional_data: Record<string, unknown>;
}

export interface CtpSettings {
  success_url: string | null;
  decline_url: string | null;
  fail_url: string | null;
  cancel_url: string | null;
  notification_url: string | null;
  language: string;
  customer_fields: { visible: string[]; read_only: string[] };
}

export interface CtpInput {
  transactionType: CtpTransactionType;
  attempts: number;
  test: boolean;
  version: string | null;
  order: CtpOrder;
  settings: CtpSettings;
  customer: Record<string, string> | null;
  paymentMethod: Record<string, unknown> | null;
  expiresAt: Date | null;
}

function fieldList(f: Fields, name: string): string[] {
  const v = f.body[name];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
    f.check(name, false, 'must be an array of field names');
    return [];
  }
  const unknown = v.filter((x) => !(CUSTOMER_FIELD_NAMES as string[]).includes(x));
  if (unknown.length > 0) f.check(name, false, `has unknown fields: ${unknown.join(', ')}`);
  return [...new Set(v as string[])];
}

function customerOf(f: Fields): Record<string, string> | null {
  const body = f.object('customer');
  if (!body) return null;
  const c = new Fields(body, f.errors, ['customer']);
  const out: Record<string, string> = {};
  for (const name of [...CUSTOMER_FIELD_NAMES, 'ip'] as const) {
    const v = c.string(name, { max: name === 'email' ? 254 : 255 });
    if (v !== undefined) out[name] = v;
  }
  if (out.email !== undefined) c.check('email', isEmail(out.email));
  if (out.ip !== undefined) c.check('ip', isIpAddress(out.ip));
  checkAddress(c, out);
  if (out.birth_date !== undefined)
    c.check('birth_date', isCalendarDate(out.birth_date), 'must be YYYY-MM-DD');
  return out;
}

function versionOf(body: Record<string, unknown>, checkout: Record<string, unknown>, header: unknown) {
  const raw = header ?? checkout.version ?? body.version;
  if (raw === undefined || raw === null || raw === '') return null;
  if ((typeof raw !== 'string' && typeof raw !== 'number') || !/^\d+(\.\d+)*$/.test(String(raw)))
    throw ApiError.validation({ version: ['must be a version number such as 2 or 2.1'] });
  return String(raw);
}

export function parseCheckout(body: unknown, versionHeader: unknown, now: Date): CtpInput {
  const root = (body ?? {}) as Record<string, unknown>;
  const errors = new ErrorCollector();
  const top = new Fields(root, errors);
  const checkout = top.object('checkout');
  if (!checkout) {
    if (!errors.has('checkout')) errors.add('checkout', Msg.blank);
    errors.throwIfAny();
  }
  const version = versionOf(root, checkout as Record<string, unknown>, versionHeader);
  const f = new Fields(checkout as Record<string, unknown>, errors, ['checkout']);
  const transactionType = f.oneOf('transaction_type', TRANSACTION_TYPES);
  if (transactionType === undefined && !f.has('transaction_type'))
    f.check('transaction_type', false, Msg.blank);
  const attempts = f.integer('attempts', { min: 1 }) ?? 1;
  const test = f.boolean('test') ?? false;

  const orderBody = f.object('order');
  if (!orderBody && !f.has('order')) f.check('order', false, Msg.blank);
  const o = new Fields(orderBody ?? {}, errors, ['checkout', 'order']);
  const tokenization = transactionType === 'tokenization';
  const amount = o.integer('amount', tokenization ? { min: 0 } : { required: true, exclusiveMin: 0 }) ?? 0;
  const currency = o.currency('currency', { required: true });
  const description = o.string('description', { required: true, max: 255 });
  const trackingId = o.textOrInteger('tracking_id', { max: 255 }) ?? null;
  const expiredAt = o.string('expired_at', { max: 64 });
  let expiresAt: Date | null = null;
  if (expiredAt !== undefined) {
    // Any future instant, as the platform takes it: offsets as Z, +hh:mm or +hhmm (decisions.md).
    const at = parseInstant(expiredAt);
    if (at === undefined)
      o.check('expired_at', false, 'must be an ISO 8601 date and time, e.g. 2026-05-01T12:00:00+03:00');
    else if (at.getTime() <= now.getTime()) o.check('expired_at', false, 'must be in the future');
    else expiresAt = at;
  }
  const additionalData = o.object('additional_data') ?? {};

  const settingsBody = f.object('settings') ?? {};
  const s = new Fields(settingsBody, errors, ['checkout', 'settings']);
  const url = (name: string) => s.url(name) ?? null;
  const settings: CtpSettings = {
    success_url: url('success_url'),
    decline_url: url('decline_url'),
    fail_url: url('fail_url'),
    cancel_url: url('cancel_url'),
    notification_url: url('notification_url'),
    language: s.language('language') ?? 'en',
    customer_fields: { visible: [], read_only: [] },
  };
  const fieldsBody = s.object('customer_fields');
  if (fieldsBody) {
    const cf = new Fields(fieldsBody, errors, ['checkout', 'settings', 'customer_fields']);
    settings.customer_fields = { visible: fieldList(cf, 'visible'), read_only: fieldList(cf, 'read_only') };
  }
  const customer = customerOf(f);
  const paymentMethod = f.object('payment_method') ?? null;
  errors.throwIfAny();
  return {
    transactionType: transactionType as CtpTransactionType,
    attempts,
    test,
    version,
    order: {
      amount,
      currency: currency as string,
      description: description as string,
      tracking_id: trackingId,
      expired_at: expiredAt ?? null,
      additional_data: additionalData,
    },
    settings,
    customer,
    paymentMethod,
    expiresAt,
  };
}
