import type { Queryable } from '../../db/db.js';
import { EVENTS_WITH_DELIVERY } from '../../notifications/index.js';
import { emailStartsWith, FEW, type ListStore, walkIndex } from '../query.js';

/**
 * The subscriptions section's reads: a filtered page of a shop's subscriptions with what the table
 * shows of their plans and customers, and what a subscription's timeline is made of. Every query is
 * bounded by the shop and read through an index (migration 020); pages are keyset by seq.
 */

export interface SubscriptionListFilter {
  state?: string;
  /** A plan's id (pln_…), or its exact title. */
  plan?: string;
  email?: string;
  trackingId?: string;
  id?: string;
}

export interface SubscriptionListRow {
  seq: number;
  id: string;
  state: string;
  plan_id: string;
  plan_title: string | null;
  amount: number | null;
  currency: string | null;
  email: string | null;
  tracking_id: string | null;
  renew_at: Date | null;
  number_failed_payment_attempts: number;
  created_at: Date;
}

const LIST_COLUMNS = `s.seq, s.id, s.state, s.plan_id, p.title AS plan_title, p.amount, p.currency, c.email,
  s.tracking_id, s.renew_at, s.number_failed_payment_attempts, s.created_at`;

/**
 * One page of a shop's subscriptions, newest first (`size + 1` rows, keyset by seq), read in
 * proportion to the page whatever the statistics say (query.ts, walkIndex). A plan's title and an
 * e-mail's start are first looked up by their own indexes (at most FEW plans, FEW customers): when
 * so few match, the page is read per plan or per customer, newest first from each
 * (subscriptions_plan, subscriptions_customer), and merged; when more match, the shop's list is
 * walked from the newest, each row checked against its customer (by primary key) or plan.
 */
export async function subscriptionPage(
  db: ListStore,
  shopId: number,
  filter: SubscriptionListFilter,
  size: number,
  after: number | undefined,
): Promise<SubscriptionListRow[]> {
  const values: unknown[] = [shopId, size + 1];
  const where = ['s.shop_id = $1'];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    where.push(sql.replaceAll('?', `$${values.length}`));
  };
  if (filter.id !== undefined) add('s.id = ?', filter.id);
  if (filter.state !== undefined) add('s.state = ?', filter.state);
  if (filter.trackingId !== undefined) add('s.tracking_id = ?', filter.trackingId);
  if (after !== undefined) add('s.seq < ?', after);

  // The plans and the customers the filters name, when they are few.
  let plans: string[] | undefined;
  if (filter.plan?.startsWith('pln_')) plans = [filter.plan];
  else if (filter.plan !== undefined) {
    const found = await walkIndex<{ id: string }>(
      db,
      'SELECT id FROM plans WHERE shop_id = $1 AND title = $2 LIMIT $3',
      [shopId, filter.plan, FEW + 1],
    );
    if (found.length === 0) return [];
    if (found.length <= FEW) plans = found.map((r) => r.id);
    else add('EXISTS (SELECT 1 FROM plans q WHERE q.id = s.plan_id AND q.title = ?)', filter.plan);
  }
  let customers: string[] | undefined;
  if (filter.email !== undefined) {
    const found = await walkIndex<{ id: string }>(
      db,
      `SELECT id FROM customers WHERE shop_id = $1 AND ${emailStartsWith('$2')} LIMIT $3`,
      [shopId, filter.email, FEW + 1],
    );
    if (found.length === 0) return [];
    if (found.length <= FEW) customers = found.map((r) => r.id);
    else
      add(
        `EXISTS (SELECT 1 FROM customers q WHERE q.id = s.customer_id AND ${emailStartsWith('?').replaceAll(
          'lower(email)',
          'lower(q.email)',
        )})`,
        filter.email,
      );
  }

  // Per plan or per customer (the fewer), the other as a condition; else the shop's list itself.
  const driver =
    customers && (!plans || customers.length <= plans.length)
      ? { column: 's.customer_id', ids: customers }
      : plans
        ? { column: 's.plan_id', ids: plans }
        : undefined;
  if (plans && driver?.column !== 's.plan_id') add('s.plan_id = ANY(?::text[])', plans);
  if (customers && driver?.column !== 's.customer_id') add('s.customer_id = ANY(?::text[])', customers);
  if (!driver) {
    // An id is one row at most: read by its key, not in the list's order (walkIndex turns sorting off).
    return walkIndex<SubscriptionListRow>(
      db,
      `SELECT ${LIST_COLUMNS}
       FROM subscriptions s
       LEFT JOIN plans p ON p.id = s.plan_id
       LEFT JOIN customers c ON c.id = s.customer_id
       WHERE ${where.join(' AND ')}
       ${filter.id === undefined ? 'ORDER BY s.seq DESC' : ''}
       LIMIT $2`,
      values,
    );
  }
  values.push(driver.ids);
  return walkIndex<SubscriptionListRow>(
    db,
    `SELECT ${LIST_COLUMNS}
     FROM unnest($${values.length}::text[]) AS k(id)
     CROSS JOIN LATERAL (
       SELECT s.* FROM subscriptions s
       WHERE ${driver.column} = k.id AND ${where.join(' AND ')}
       ORDER BY s.seq DESC
       LIMIT $2
     ) s
     LEFT JOIN plans p ON p.id = s.plan_id
     LEFT JOIN customers c ON c.id = s.customer_id
     ORDER BY s.seq DESC
     LIMIT $2`,
    values,
  );
}

/** One charge attempt of a subscription, with what the gateway's transaction says of it. */
export interface ChargeAttemptRow {
  period: number;
  attempt: number;
  amount: number;
  currency: string;
  status: string;
  transaction_uid: string | null;
  created_at: Date;
  updated_at: Date;
  message: string | null;
  three_ds_status: string | null;
  three_ds_message: string | null;
}

/** The newest `limit` charge attempts (the gateway may live elsewhere: then the transaction is absent). */
export function chargeAttempts(
  db: Queryable,
  shopId: number,
  subscriptionId: string,
  limit: number,
): Promise<ChargeAttemptRow[]> {
  return db.query<ChargeAttemptRow>(
    `SELECT c.period, c.attempt, c.amount, c.currency, c.status, c.transaction_uid::text AS transaction_uid,
       c.created_at, c.updated_at, t.message,
       t.three_d_secure ->> 'status' AS three_ds_status, t.three_d_secure ->> 'message' AS three_ds_message
     FROM subscription_charges c
     LEFT JOIN transactions t ON t.uid = c.transaction_uid AND t.shop_id = $1
     WHERE c.subscription_id = $2
     ORDER BY c.period DESC, c.attempt DESC
     LIMIT $3`,
    [shopId, subscriptionId, limit],
  );
}

export interface EventRow {
  id: number;
  event: string;
  resource_type: string;
  resource_id: string;
  /** The subscription's state the event announced (subscription events only). */
  state: string | null;
  url: string | null;
  status: string;
  attempts: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** The newest `limit` events about any of `resourceIds` (the subscription and its charges). */
export function eventsAbout(
  db: Queryable,
  shopId: number,
  resourceIds: string[],
  limit: number,
): Promise<EventRow[]> {
  return db.query<EventRow>(
    `SELECT e.id, e.event, e.resource_type, e.resource_id,
       CASE WHEN e.resource_type = 'subscription' THEN e.payload ->> 'state' END AS state,
       e.url, coalesce(d.status, 'none') AS status, coalesce(d.attempts, 0) AS attempts, d.next_attempt_at,
       d.delivered_at, e.created_at
     FROM ${EVENTS_WITH_DELIVERY}
     WHERE e.resource_id = ANY($2::text[]) AND e.shop_id = $1
     ORDER BY e.id DESC
     LIMIT $3`,
    [shopId, resourceIds, limit],
  );
}

export interface DeliveryAttemptRow {
  event_id: number;
  n: number;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export function deliveryAttempts(db: Queryable, eventIds: number[]): Promise<DeliveryAttemptRow[]> {
  if (eventIds.length === 0) return Promise.resolve([]);
  return db.query<DeliveryAttemptRow>(
    `SELECT event_id, n, at, status_code, duration_ms, error
     FROM event_attempts WHERE event_id = ANY($1::bigint[]) ORDER BY event_id, n`,
    [eventIds],
  );
}
