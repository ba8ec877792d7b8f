import type { ChargeRow } from '../charging/index.js';
import type { CustomerRow } from '../customers/index.js';
import { FREE_PLAN, INDEX_ORDER_PLAN } from '../db/claim-plan.js';
import type { Queryable, Tx } from '../db/db.js';
import type { PlanRow } from '../plans/index.js';
import type { SubscriptionRow } from '../subscriptions/index.js';

/**
 * The scheduler's questions to the store. The subscriptions table is the queue: a subscription is
 * due when its renew_at has passed on its shop's clock (real time, plus a test shop's offset).
 */

const DUE = `s.cancelled_at IS NULL AND s.renew_at IS NOT NULL
  AND s.renew_at <= $1::timestamptz + sh.clock_offset_ms * interval '1 millisecond'`;

/**
 * Locks up to `limit` due subscriptions, oldest first, skipping those another run holds: any number
 * of instances claim disjoint batches. `shopId` limits the run to one shop (a test clock's advance).
 * In index order whatever the statistics say (INDEX_ORDER_PLAN), and only as far as the latest shop's
 * clock: what it reads grows with what is due, not with how many subscriptions renew later.
 */
export async function lockDue(tx: Tx, now: Date, limit: number, shopId?: number): Promise<SubscriptionRow[]> {
  const params: unknown[] = [now, limit];
  let shop = '';
  if (shopId !== undefined) {
    params.push(shopId);
    shop = 'AND s.shop_id = $3';
  }
  await tx.query(INDEX_ORDER_PLAN);
  const due = await tx.query<SubscriptionRow>(
    `SELECT s.* FROM subscriptions s JOIN shops sh ON sh.id = s.shop_id
     WHERE ${DUE} ${shop}
       AND s.renew_at <= $1::timestamptz + (SELECT max(clock_offset_ms) FROM shops) * interval '1 millisecond'
     ORDER BY s.renew_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
    params,
  );
  await tx.query(FREE_PLAN);
  return due;
}

export function plansByIds(db: Queryable, ids: string[]): Promise<PlanRow[]> {
  return db.query<PlanRow>('SELECT * FROM plans WHERE id = ANY($1::text[])', [ids]);
}

/**
 * The attempts still waiting for an outcome among these subscriptions': sent and unanswered, of
 * unknown outcome, or waiting for the cardholder's 3-D Secure step. While one is open the period is
 * never charged again: billing asks the gateway how it ended, and asks again a lease later.
 */
export function openAttempts(db: Queryable, subscriptionIds: string[]): Promise<ChargeRow[]> {
  return db.query<ChargeRow>(
    `SELECT * FROM subscription_charges
     WHERE subscription_id = ANY($1::text[]) AND status IN ('pending', 'unknown', 'incomplete')`,
    [subscriptionIds],
  );
}

/**
 * Open attempts of a cancelled subscription that billing asks about: sent and unanswered, of unknown
 * outcome, or a 3-D Secure step the cancel could not end at the gateway (its reversal is due).
 */
const CANCELLED_OPEN = `(c.status IN ('pending', 'unknown') OR (c.status = 'incomplete' AND c.reversal = 'due'))`;

/** An open attempt of a cancelled subscription, with what resolving it needs. */
export interface CancelledAttempt extends ChargeRow {
  shop_id: number;
}

/**
 * Attempts sent and unanswered, or of unknown outcome, of cancelled subscriptions, whose lease is
 * over on their shop's clock: a cancelled subscription never falls due again, so billing asks the
 * gateway about these apart from the due ones. Oldest first.
 */
export function cancelledOpenAttempts(
  db: Queryable,
  now: Date,
  leaseMs: number,
  limit: number,
  shopId?: number,
): Promise<CancelledAttempt[]> {
  const params: unknown[] = [now, leaseMs, limit];
  let shop = '';
  if (shopId !== undefined) {
    params.push(shopId);
    shop = 'AND s.shop_id = $4';
  }
  return db.query<CancelledAttempt>(
    `SELECT c.*, s.shop_id FROM subscription_charges c
     JOIN subscriptions s ON s.id = c.subscription_id AND s.shop_id = c.shop_id JOIN shops sh ON sh.id = s.shop_id
     WHERE ${CANCELLED_OPEN} AND s.cancelled_at IS NOT NULL ${shop}
       AND c.updated_at <= $1::timestamptz + (sh.clock_offset_ms - $2::bigint) * interval '1 millisecond'
     ORDER BY c.updated_at LIMIT $3`,
    params,
  );
}

/** The highest attempt so far at each subscription's charge of a period. */
export async function lastAttempts(
  db: Queryable,
  wanted: { id: string; period: number }[],
): Promise<Map<string, number>> {
  if (wanted.length === 0) return new Map();
  const rows = await db.query<{ subscription_id: string; attempt: number }>(
    `SELECT c.subscription_id, max(c.attempt)::int AS attempt
     FROM subscription_charges c
     JOIN unnest($1::text[], $2::int[]) AS w (id, period) ON w.id = c.subscription_id AND w.period = c.period
     GROUP BY c.subscription_id`,
    [wanted.map((w) => w.id), wanted.map((w) => w.period)],
  );
  return new Map(rows.map((r) => [r.subscription_id, r.attempt]));
}

export interface Backlog {
  due: number;
  /** Seconds since the oldest due subscription fell due; 0 when none is. */
  oldestSeconds: number;
}

/** How much is due now and how late the oldest is: the billing lag. */
export async function dueBacklog(db: Queryable, now: Date): Promise<Backlog> {
  const [row] = await db.query<{ due: number; oldest: Date | null }>(
    `SELECT count(*)::int AS due, min(s.renew_at) AS oldest
     FROM subscriptions s JOIN shops sh ON sh.id = s.shop_id WHERE ${DUE}`,
    [now],
  );
  const oldest = row?.oldest ? (now.getTime() - row.oldest.getTime()) / 1000 : 0;
  return { due: row?.due ?? 0, oldestSeconds: Math.max(0, oldest) };
}

/**
 * When the earliest open attempt of this shop's cancelled subscriptions is to be asked about (its
 * lease over; cancelledOpenAttempts), on the store's own timeline.
 */
export async function nextCancelledAttemptOfShop(
  db: Queryable,
  shopId: number,
  leaseMs: number,
): Promise<Date | undefined> {
  const [row] = await db.query<{ at: Date | null }>(
    `SELECT min(c.updated_at) + $2::bigint * interval '1 millisecond' AS at
     FROM subscription_charges c JOIN subscriptions s ON s.id = c.subscription_id AND s.shop_id = c.shop_id
     WHERE s.shop_id = $1 AND s.cancelled_at IS NOT NULL AND ${CANCELLED_OPEN}`,
    [shopId, leaseMs],
  );
  return row?.at ?? undefined;
}

/** The earliest instant something of this shop falls due, on the store's own timeline (renew_at). */
export async function nextDueOfShop(db: Queryable, shopId: number): Promise<Date | undefined> {
  const [row] = await db.query<{ at: Date | null }>(
    `SELECT min(renew_at) AS at FROM subscriptions
     WHERE shop_id = $1 AND cancelled_at IS NULL AND renew_at IS NOT NULL`,
    [shopId],
  );
  return row?.at ?? undefined;
}

export async function customersByIds(db: Queryable, ids: string[]): Promise<CustomerRow[]> {
  if (ids.length === 0) return [];
  return db.query<CustomerRow>('SELECT * FROM customers WHERE id = ANY($1::text[])', [ids]);
}
