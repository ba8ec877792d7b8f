import type { CardRecord } from '../cards/index.js';
import type { TransactionSummary } from '../charging/index.js';
import { unknownCursor } from '../core/paging.js';
import type { Queryable, Tx } from '../db/db.js';

/**
 * Reads and locks of subscriptions. Their writer is state.ts: a row is changed only there, from a
 * row locked here.
 */

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
  /**
   * The IANA zone its month and year periods are counted in, and its quiet hours read in: the
   * shop's zone when it was created, kept whatever the shop's zone becomes.
   */
  time_zone: string;
  renew_at: Date | null;
  active_to: Date | null;
  paid_billing_cycles: number;
  number_failed_payment_attempts: number;
  last_transaction: TransactionSummary | null;
  cancel_reason: string | null;
  cancelled_at: Date | null;
  /**
   * Whether created.subscription has been written. False only for a card subscription between its
   * creation and the first record of its first charge (transitions.ts: the charge's record announces it).
   */
  announced: boolean;
  created_at: Date;
  updated_at: Date;
}

export type NewSubscription = { announced?: boolean } & Omit<
  SubscriptionRow,
  | 'paid_billing_cycles'
  | 'number_failed_payment_attempts'
  | 'last_transaction'
  | 'cancel_reason'
  | 'cancelled_at'
  | 'announced'
  | 'created_at'
  | 'updated_at'
>;

/** The columns a transition may change (state.ts writes every one of them back). */
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
    | 'announced'
    // Set once, when the customer pays on the hosted page of a redirect subscription.
    | 'customer_id'
    | 'card_token'
    | 'card'
    | 'billing_anchor'
    | 'billing_day'
  >
>;

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

/** The subscription whose charge is this gateway transaction (after a 3-D Secure step, say). */
export async function subscriptionOfTransaction(
  db: Queryable,
  uid: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    `SELECT s.* FROM subscriptions s JOIN subscription_charges c ON c.subscription_id = s.id AND c.shop_id = s.shop_id
     WHERE c.transaction_uid = $1`,
    [uid],
  );
  return row;
}
