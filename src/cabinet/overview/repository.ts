import type { Queryable } from '../../db/db.js';

/**
 * The overview's aggregates. Each reads an index bounded by the shop (migration 020): money by the
 * 30-day window of transactions_shop_created, never the shop's whole history; counts of troubles
 * stop at a cap, so a shop with a million failed deliveries still answers at once.
 */

export const TROUBLE_CAP = 1000;

/** How many of the shop's subscriptions are in each state (an index-only scan of (shop_id, state)). */
export async function stateCounts(db: Queryable, shopId: number): Promise<Map<string, number>> {
  const rows = await db.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM subscriptions WHERE shop_id = $1 GROUP BY state',
    [shopId],
  );
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}

export interface DayTotal {
  /** The day in the shop's zone, YYYY-MM-DD. */
  day: string;
  currency: string;
  /** Successful payments and captures, in minor units. */
  revenue: number;
  /** Successful refunds, in minor units. */
  refunded: number;
  /** Charge attempts (payments and authorizations) that succeeded, and those that failed. */
  paid: number;
  failed: number;
}

/** Money per day and currency of transactions created in [from, to), days cut in the shop's zone. */
export function dailyTotals(
  db: Queryable,
  shopId: number,
  from: Date,
  to: Date,
  zone: string,
): Promise<DayTotal[]> {
  return db.query<DayTotal>(
    `SELECT to_char(created_at AT TIME ZONE $4, 'YYYY-MM-DD') AS day, currency,
       coalesce(sum(amount) FILTER (WHERE status = 'successful' AND type IN ('payment', 'capture')), 0)::bigint AS revenue,
       coalesce(sum(amount) FILTER (WHERE status = 'successful' AND type = 'refund'), 0)::bigint AS refunded,
       count(*) FILTER (WHERE status = 'successful' AND type IN ('payment', 'authorization'))::int AS paid,
       count(*) FILTER (WHERE status IN ('failed', 'error') AND type IN ('payment', 'authorization'))::int AS failed
     FROM transactions
     WHERE shop_id = $1 AND created_at >= $2 AND created_at < $3
       AND type IN ('payment', 'capture', 'authorization', 'refund')
     GROUP BY 1, 2
     ORDER BY 1, 2`,
    [shopId, from, to, zone],
  );
}

export interface RetryingRow {
  id: string;
  state: string;
  renew_at: Date | null;
  number_failed_payment_attempts: number;
  message: string | null;
}

/** Live subscriptions whose last charge failed, with their retry time, soonest first; and how many. */
export async function retryingSubscriptions(
  db: Queryable,
  shopId: number,
  limit: number,
): Promise<{ rows: RetryingRow[]; count: number }> {
  const where = 'shop_id = $1 AND cancelled_at IS NULL AND number_failed_payment_attempts > 0';
  const [rows, counted] = await Promise.all([
    db.query<RetryingRow>(
      `SELECT id, state, renew_at, number_failed_payment_attempts, last_transaction ->> 'message' AS message
       FROM subscriptions WHERE ${where} ORDER BY renew_at NULLS LAST LIMIT $2`,
      [shopId, limit],
    ),
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM subscriptions WHERE ${where} LIMIT $2) t`,
      [shopId, TROUBLE_CAP],
    ),
  ]);
  return { rows, count: Number(counted[0]?.n ?? 0) };
}

export interface FailedChargeRow {
  uid: string;
  status: string;
  message: string | null;
  amount: number;
  currency: string;
  created_at: Date;
  subscription_id: string | null;
}

/** The newest failed charges since `since`, with the subscription each was for (when one was). */
export function failedCharges(
  db: Queryable,
  shopId: number,
  since: Date,
  limit: number,
): Promise<FailedChargeRow[]> {
  return db.query<FailedChargeRow>(
    `SELECT t.uid::text AS uid, t.status, t.message, t.amount, t.currency, t.created_at,
       (SELECT c.subscription_id FROM subscription_charges c WHERE c.transaction_uid = t.uid LIMIT 1) AS subscription_id
     FROM transactions t
     WHERE t.shop_id = $1 AND t.created_at >= $2
       AND t.status IN ('failed', 'error') AND t.type IN ('payment', 'authorization')
     ORDER BY t.created_at DESC
     LIMIT $3`,
    [shopId, since, limit],
  );
}

/** Notifications given up on, and those being retried after a failed attempt (each up to the cap). */
export async function troubledNotifications(
  db: Queryable,
  shopId: number,
): Promise<{ failed: number; retrying: number }> {
  const [failed, retrying] = await Promise.all([
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM deliveries WHERE shop_id = $1 AND status = 'failed' LIMIT $2) t`,
      [shopId, TROUBLE_CAP],
    ),
    db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM deliveries
         WHERE shop_id = $1 AND status = 'pending' AND attempts > 0 AND leased_until IS NULL LIMIT $2) t`,
      [shopId, TROUBLE_CAP],
    ),
  ]);
  return { failed: Number(failed[0]?.n ?? 0), retrying: Number(retrying[0]?.n ?? 0) };
}
