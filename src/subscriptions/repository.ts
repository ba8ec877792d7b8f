import type { CardRecord } from '../cards/vault.js';
import { unknownCursor } from '../core/paging.js';
import type { Queryable, Statement, Tx } from '../db/db.js';
import type { TransactionSummary } from './summary.js';

export type SubscriptionState =
  | 'pending'
  | 'redirecting'
  | 'trial'
  | 'trial_processing'
  | 'processing'
  | 'active'
  | 'failed'
  | 'error'
  | 'canceled';

export const SUBSCRIPTION_STATES: readonly SubscriptionState[] = [
  'pending',
  'redirecting',
  'trial',
  'trial_processing',
  'processing',
  'active',
  'failed',
  'error',
  'canceled',
];

export interface SubscriptionRow {
  id: string;
  shop_id: number;
  plan_id: string;
  customer_id: string | null;
  card_token: string | null;
  card: CardRecord | null;
  state: SubscriptionState;
  tracking_id: string | null;
  device_id: string | null;
  return_url: string | null;
  notification_url: string | null;
  additional_data: Record<string, unknown>;
  receipt_text: string[] | null;
  avs_cvc_verification: Record<string, unknown> | null;
  settings: Record<string, unknown> | null;
  language: string;
  dynamic_billing_descriptor: string | null;
  billing_anchor: Date;
  billing_day: number;
  renew_at: Date | null;
  active_to: Date | null;
  paid_billing_cycles: number;
  number_failed_payment_attempts: number;
  last_transaction: TransactionSummary | null;
  cancel_reason: string | null;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type NewSubscription = Omit<
  SubscriptionRow,
  | 'paid_billing_cycles'
  | 'number_failed_payment_attempts'
  | 'last_transaction'
  | 'cancel_reason'
  | 'cancelled_at'
  | 'created_at'
  | 'updated_at'
>;

const JSON_COLUMNS = new Set([
  'additional_data',
  'receipt_text',
  'avs_cvc_verification',
  'settings',
  'card',
  'last_transaction',
]);
const json = (c: string, v: unknown) =>
  JSON_COLUMNS.has(c) && v !== null && v !== undefined ? JSON.stringify(v) : v;
const jsonOrNull = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Every column of a subscription, in the order subscriptionInsert binds them. */
const ROW_COLUMNS = [
  'id',
  'shop_id',
  'plan_id',
  'customer_id',
  'card_token',
  'card',
  'state',
  'tracking_id',
  'device_id',
  'return_url',
  'notification_url',
  'additional_data',
  'receipt_text',
  'avs_cvc_verification',
  'settings',
  'language',
  'dynamic_billing_descriptor',
  'billing_anchor',
  'billing_day',
  'renew_at',
  'active_to',
  'paid_billing_cycles',
  'number_failed_payment_attempts',
  'last_transaction',
  'cancel_reason',
  'cancelled_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SubscriptionRow)[];

const INSERT_SQL = `INSERT INTO subscriptions (${ROW_COLUMNS.join(', ')})
     VALUES (${ROW_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;
const INSERT_RETURNING_SQL = `${INSERT_SQL} RETURNING *`;

/**
 * The INSERT of a new subscription, to run alone or in a batch; RETURNING the stored row unless told
 * not to. The row is complete: it may carry the outcome of its first charge already (state, counters,
 * last_transaction). One text for every subscription, read column by column (no keys enumerated).
 */
export function subscriptionInsert(r: SubscriptionRow, returning = true): Statement {
  return {
    sql: returning ? INSERT_RETURNING_SQL : INSERT_SQL,
    params: [
      r.id,
      r.shop_id,
      r.plan_id,
      r.customer_id,
      r.card_token,
      jsonOrNull(r.card),
      r.state,
      r.tracking_id,
      r.device_id,
      r.return_url,
      r.notification_url,
      jsonOrNull(r.additional_data),
      jsonOrNull(r.receipt_text),
      jsonOrNull(r.avs_cvc_verification),
      jsonOrNull(r.settings),
      r.language,
      r.dynamic_billing_descriptor,
      r.billing_anchor,
      r.billing_day,
      r.renew_at,
      r.active_to,
      r.paid_billing_cycles,
      r.number_failed_payment_attempts,
      jsonOrNull(r.last_transaction),
      r.cancel_reason,
      r.cancelled_at,
      r.created_at,
      r.updated_at,
    ],
  };
}

export async function insertSubscription(
  db: Queryable,
  s: NewSubscription,
  now: Date,
): Promise<SubscriptionRow> {
  const insert = subscriptionInsert(newSubscriptionRow(s, now));
  const [row] = await db.query<SubscriptionRow>(insert.sql, insert.params);
  return row as SubscriptionRow;
}

/** The row a new subscription becomes once inserted, before any charge changed it. */
export function newSubscriptionRow(s: NewSubscription, now: Date): SubscriptionRow {
  return withChange(s, {}, now, now);
}

/**
 * `r` with `change` applied, every column named: rows built field by field keep one shape, which
 * keeps the hot path of creating a subscription free of the engine's slow object paths.
 */
export function withChange(
  r: NewSubscription & Partial<SubscriptionRow>,
  change: SubscriptionChange,
  createdAt: Date,
  updatedAt: Date,
): SubscriptionRow {
  return {
    id: r.id,
    shop_id: r.shop_id,
    plan_id: r.plan_id,
    customer_id: change.customer_id !== undefined ? change.customer_id : r.customer_id,
    card_token: change.card_token !== undefined ? change.card_token : r.card_token,
    card: change.card !== undefined ? change.card : r.card,
    state: change.state ?? r.state,
    tracking_id: r.tracking_id,
    device_id: r.device_id,
    return_url: r.return_url,
    notification_url: r.notification_url,
    additional_data: r.additional_data,
    receipt_text: r.receipt_text,
    avs_cvc_verification: r.avs_cvc_verification,
    settings: r.settings,
    language: r.language,
    dynamic_billing_descriptor: r.dynamic_billing_descriptor,
    billing_anchor: change.billing_anchor ?? r.billing_anchor,
    billing_day: change.billing_day ?? r.billing_day,
    renew_at: change.renew_at !== undefined ? change.renew_at : r.renew_at,
    active_to: change.active_to !== undefined ? change.active_to : r.active_to,
    paid_billing_cycles: change.paid_billing_cycles ?? r.paid_billing_cycles ?? 0,
    number_failed_payment_attempts:
      change.number_failed_payment_attempts ?? r.number_failed_payment_attempts ?? 0,
    last_transaction:
      change.last_transaction !== undefined ? change.last_transaction : (r.last_transaction ?? null),
    cancel_reason: change.cancel_reason !== undefined ? change.cancel_reason : (r.cancel_reason ?? null),
    cancelled_at: change.cancelled_at !== undefined ? change.cancelled_at : (r.cancelled_at ?? null),
    created_at: createdAt,
    updated_at: updatedAt,
  };
}

export type SubscriptionChange = Partial<
  Pick<
    SubscriptionRow,
    | 'state'
    | 'renew_at'
    | 'active_to'
    | 'paid_billing_cycles'
    | 'number_failed_payment_attempts'
    | 'last_transaction'
    | 'cancel_reason'
    | 'cancelled_at'
    // Set once, when the customer pays on the hosted page of a redirect subscription.
    | 'customer_id'
    | 'card_token'
    | 'card'
    | 'billing_anchor'
    | 'billing_day'
  >
>;

export async function updateSubscription(
  db: Queryable,
  id: string,
  change: SubscriptionChange,
  now: Date,
): Promise<SubscriptionRow> {
  const columns = Object.keys(change);
  const sets = columns.map((c, i) => `${c} = $${i + 2}`);
  const [row] = await db.query<SubscriptionRow>(
    `UPDATE subscriptions SET ${[...sets, `updated_at = $${columns.length + 2}`].join(', ')} WHERE id = $1 RETURNING *`,
    [id, ...columns.map((c) => json(c, (change as Record<string, unknown>)[c])), now],
  );
  if (!row) throw new Error(`subscription ${id} vanished during an update`);
  return row;
}

export async function findSubscription(
  db: Queryable,
  shopId: number,
  id: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    'SELECT * FROM subscriptions WHERE shop_id = $1 AND id = $2',
    [shopId, id],
  );
  return row;
}

export async function lockSubscription(
  db: Tx,
  shopId: number,
  id: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    'SELECT * FROM subscriptions WHERE shop_id = $1 AND id = $2 FOR UPDATE',
    [shopId, id],
  );
  return row;
}

export interface SubscriptionFilter {
  trackingId?: string | undefined;
  state?: string | undefined;
  customerId?: string | undefined;
  planId?: string | undefined;
}

/**
 * A page of a shop's subscriptions. Newest first, except when filtering by tracking_id: then the
 * first match comes first, as the seed says a lookup by tracking_id returns the first match.
 */
export async function listSubscriptions(
  db: Queryable,
  shopId: number,
  filter: SubscriptionFilter,
  limit: number,
  startingAfter: string | undefined,
): Promise<SubscriptionRow[]> {
  const values: unknown[] = [shopId, limit + 1];
  const where = ['shop_id = $1'];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replace('?', `$${values.length}`));
  };
  if (filter.trackingId !== undefined) add('tracking_id = ?', filter.trackingId);
  if (filter.state !== undefined) add('state = ?', filter.state);
  if (filter.customerId !== undefined) add('customer_id = ?', filter.customerId);
  if (filter.planId !== undefined) add('plan_id = ?', filter.planId);
  const ascending = filter.trackingId !== undefined;
  if (startingAfter !== undefined) {
    const [cursor] = await db.query<{ seq: number }>(
      'SELECT seq FROM subscriptions WHERE shop_id = $1 AND id = $2',
      [shopId, startingAfter],
    );
    if (!cursor) throw unknownCursor();
    add(ascending ? 'seq > ?' : 'seq < ?', cursor.seq);
  }
  return db.query<SubscriptionRow>(
    `SELECT * FROM subscriptions WHERE ${where.join(' AND ')} ORDER BY seq ${ascending ? 'ASC' : 'DESC'} LIMIT $2`,
    values,
  );
}
