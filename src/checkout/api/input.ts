import { Type } from 'typebox';
import { parseInstant } from '../../calendar/iso-instant.js';
import { AddressMsg, addressCode, addressProblems, hasStates, stateMessage } from '../../core/address.js';
import { ApiError, ErrorCollector } from '../../core/errors.js';
import { Msg } from '../../core/rules.js';
import {
  addFormat,
  checkBody,
  enforced,
  namedAs,
  type RuleCheck,
  withRules,
} from '../../core/schema-check.js';
import { MESSAGES } from '../../core/schema-errors.js';
import {
  FreeObject,
  HttpUrl,
  Language,
  Nullable,
  Text,
  TrackingId,
  WholeNumber,
} from '../../http/schemas.js';
import { CUSTOMER_FIELD_NAMES } from '../form-errors.js';

const EXPIRY_FORMAT = 'must be an ISO 8601 date and time, e.g. 2026-05-01T12:00:00+03:00';

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
  /** `iframe: true`: the page is shown in a frame on the shop's page (docs/embedding.md). */
  iframe: boolean;
}

addFormat('iso-instant', (text) => parseInstant(text) !== undefined);

const FIELD_NAMES = 'must be an array of field names';
const FieldList = (description: string) =>
  Type.Optional(
    Nullable(
      Type.Array(Type.String({ [MESSAGES]: { type: FIELD_NAMES } }), {
        description: `${description}: any of ${CUSTOMER_FIELD_NAMES.join(', ')}`,
        [MESSAGES]: { type: FIELD_NAMES },
      }),
    ),
  );

/** Names a customer field list may hold: the message lists those it does not know. */
function knownFieldNames(lists: Record<string, unknown>, check: RuleCheck): void {
  for (const name of ['visible', 'read_only']) {
    const list = lists[name];
    if (!check.passed(name) || !Array.isArray(list)) continue;
    const unknown = list.filter((x) => !(CUSTOMER_FIELD_NAMES as string[]).includes(x as string));
    if (unknown.length > 0) check.add(name, `has unknown fields: ${unknown.join(', ')}`);
  }
}

/** A US or Canadian state, and a US zip, as the shared address rules have them. */
function realAddress(customer: Record<string, unknown>, check: RuleCheck): void {
  const text = (field: string) => {
    const v = customer[field];
    return check.passed(field) && typeof v === 'string' && v !== '' ? v : undefined;
  };
  const country = text('country');
  const problems = addressProblems({ country, state: text('state'), zip: text('zip') });
  if (problems.has('state')) check.add('state', stateMessage(country ?? ''));
  if (problems.has('zip')) check.add('zip', AddressMsg.usZip);
}

const customerField = (name: string) => {
  const formats: Record<string, Record<string, unknown>> = {
    email: { maxLength: 254, format: 'email' },
    country: { maxLength: 255, format: 'country', description: 'ISO 3166-1 alpha-2, in any case' },
    birth_date: { maxLength: 255, format: 'calendar-date', [MESSAGES]: { format: 'must be YYYY-MM-DD' } },
    ip: { maxLength: 255, format: 'ip' },
  };
  return Type.Optional(Nullable(Type.String(formats[name] ?? { maxLength: 255 })));
};

/**
 * A tokenization may carry no amount (0 or more); a payment or an authorization needs one greater
 * than 0. The type decides, so the rule sits on the checkout.
 */
function amountOfType(checkout: Record<string, unknown>, check: RuleCheck): void {
  const order = checkout.order;
  if (typeof order !== 'object' || order === null || !check.passed('order/amount')) return;
  const amount = (order as Record<string, unknown>).amount;
  const tokenization = checkout.transaction_type === 'tokenization';
  if (amount === undefined || amount === null) {
    if (!tokenization) check.add(['order', 'amount'], Msg.blank);
  } else if (typeof amount === 'number') {
    if (tokenization && amount < 0) check.add(['order', 'amount'], Msg.greaterOrEqual(0));
    if (!tokenization && amount <= 0) check.add(['order', 'amount'], Msg.greaterThan(0));
  }
}

/**
 * `POST /ctp/api/checkouts`: the platform's `checkout` object. The schema states every rule of one
 * field; the amount's bound (by transaction_type), known customer field names and the address rules
 * stay beside it; the version (the X-API-Version header first) and an expiry in the future are
 * checked by parseCheckout.
 */
export const CheckoutBody = enforced(
  Type.Object({
    checkout: withRules(
      Type.Object({
        version: Type.Optional(
          Type.Unknown({
            description:
              'A version number such as 2 or 2.1; the X-API-Version header wins, then version beside checkout',
          }),
        ),
        transaction_type: Type.Enum(TRANSACTION_TYPES, { type: 'string' }),
        attempts: Type.Optional(Nullable(WholeNumber({ minimum: 1, default: 1 }))),
        test: Type.Optional(Nullable(Type.Boolean({ default: false }))),
        iframe: Type.Optional(
          Nullable(
            Type.Boolean({
              default: false,
              description:
                "The page is shown in a frame on the shop's page: laid out for it, and the end of a payment is posted to the shop's window",
            }),
          ),
        ),
        order: Type.Object({
          amount: Type.Optional(
            Nullable(
              WholeNumber({
                description: 'Minor units: greater than 0, or 0 and more for a tokenization (then optional)',
              }),
            ),
          ),
          currency: Text({ format: 'currency', description: 'ISO 4217 alpha-3, or BTC, ETH, USDT, USDC' }),
          description: Text({ maxLength: 255 }),
          tracking_id: Type.Optional(TrackingId),
          expired_at: Type.Optional(
            Nullable(
              Type.String({
                maxLength: 64,
                format: 'iso-instant',
                description: 'In the future; offsets as Z, +hh:mm or +hhmm',
                [MESSAGES]: { format: EXPIRY_FORMAT },
              }),
            ),
          ),
          additional_data: Type.Optional(Nullable(FreeObject)),
        }),
        settings: Type.Optional(
          Nullable(
            Type.Object({
              success_url: Type.Optional(Nullable(HttpUrl())),
              decline_url: Type.Optional(Nullable(HttpUrl())),
              fail_url: Type.Optional(Nullable(HttpUrl())),
              cancel_url: Type.Optional(Nullable(HttpUrl())),
              notification_url: Type.Optional(Nullable(HttpUrl())),
              language: Type.Optional(Nullable(Language())),
              customer_fields: Type.Optional(
                Nullable(
                  withRules(
                    Type.Object({
                      visible: FieldList('Fields shown on the page'),
                      read_only: FieldList('Fields shown and not editable'),
                    }),
                    knownFieldNames,
                  ),
                ),
              ),
            }),
          ),
        ),
        // Its fields' errors are named customer.email, customer.state, as the platform names them.
        customer: Type.Optional(
          Nullable(
            namedAs(
              withRules(
                Type.Object(
                  Object.fromEntries(
                    [...CUSTOMER_FIELD_NAMES, 'ip'].map((name) => [name, customerField(name)]),
                  ),
                ),
                realAddress,
              ),
              ['customer'],
            ),
          ),
        ),
        payment_method: Type.Optional(Nullable(FreeObject)),
      }),
      amountOfType,
    ),
  }),
);

function versionOf(body: Record<string, unknown>, checkout: Record<string, unknown>, header: unknown) {
  const raw = header ?? checkout.version ?? body.version;
  if (raw === undefined || raw === null || raw === '') return null;
  if ((typeof raw !== 'string' && typeof raw !== 'number') || !/^\d+(\.\d+)*$/.test(String(raw)))
    throw ApiError.validation({ version: ['must be a version number such as 2 or 2.1'] });
  return String(raw);
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const member = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

function customerOf(body: Record<string, unknown> | undefined): Record<string, string> | null {
  if (!body) return null;
  const out: Record<string, string> = {};
  for (const name of [...CUSTOMER_FIELD_NAMES, 'ip']) {
    const v = text(body[name]);
    if (v !== undefined) out[name] = v;
  }
  // The country in any case, a US or Canadian state too, kept in upper case.
  if (out.country) {
    out.country = addressCode(out.country);
    if (out.state && hasStates(out.country)) out.state = addressCode(out.state);
  }
  return out;
}

/** Checks a checkout request (CheckoutBody, the version, an expiry in the future) and reads it. */
export function parseCheckout(body: unknown, versionHeader: unknown, now: Date): CtpInput {
  const errors = new ErrorCollector();
  if (!checkBody(CheckoutBody, body, errors)) errors.throwIfAny();
  const root = body as Record<string, unknown>;
  const checkout = root.checkout as Record<string, unknown>;
  const version = versionOf(root, checkout, versionHeader);
  const order = checkout.order as Record<string, unknown>;
  const expiredAt = text(order.expired_at);
  const expiresAt = expiredAt === undefined ? null : (parseInstant(expiredAt) as Date);
  if (expiresAt && expiresAt.getTime() <= now.getTime())
    errors.add(['checkout', 'order', 'expired_at'], 'must be in the future');
  errors.throwIfAny();
  const settings = member(checkout.settings) ?? {};
  const lists = member(settings.customer_fields);
  const list = (v: unknown) => (Array.isArray(v) ? [...new Set(v as string[])] : []);
  const url = (name: string) => text(settings[name]) ?? null;
  const trackingId = order.tracking_id;
  return {
    transactionType: checkout.transaction_type as CtpTransactionType,
    attempts: typeof checkout.attempts === 'number' ? checkout.attempts : 1,
    test: checkout.test === true,
    version,
    order: {
      amount: typeof order.amount === 'number' ? order.amount : 0,
      currency: order.currency as string,
      description: order.description as string,
      tracking_id: typeof trackingId === 'number' ? String(trackingId) : (text(trackingId) ?? null),
      expired_at: expiredAt ?? null,
      additional_data: member(order.additional_data) ?? {},
    },
    settings: {
      success_url: url('success_url'),
      decline_url: url('decline_url'),
      fail_url: url('fail_url'),
      cancel_url: url('cancel_url'),
      notification_url: url('notification_url'),
      language: text(settings.language) ?? 'en',
      customer_fields: { visible: list(lists?.visible), read_only: list(lists?.read_only) },
    },
    customer: customerOf(member(checkout.customer)),
    paymentMethod: member(checkout.payment_method) ?? null,
    expiresAt,
    iframe: checkout.iframe === true,
  };
}
