import type { Queryable, RowsShape, Statement, Tx } from '../db/db.js';
import { shaped } from '../db/rows.js';

/**
 * The record of each billing period's charge of a subscription (table subscription_charges): its
 * claim and the gateway's answer. The only file that writes the table (test/architecture/writers),
 * so every way a charge row can change is read here.
 */

/** Charge statuses that still wait for the gateway's final answer. */
const OPEN_CHARGE = "status IN ('pending', 'unknown', 'incomplete')";

export interface ChargeRow {
  subscription_id: string;
  period: number;
  attempt: number;
  amount: number;
  currency: string;
  status: string;
  transaction_uid: string | null;
  /**
   * What becomes of money the attempt takes after its subscription was cancelled: 'due' when the
   * cancel found it open (a success is refunded at once), 'refunded' once it was (`reversal_uid`).
   */
  reversal: 'due' | 'refunded' | null;
  reversal_uid: string | null;
  /** The subscription's shop: the row is kept with the shop's other rows (docs/scaling.md). */
  shop_id: number;
  created_at: Date;
}

export interface ChargeClaim {
  /** The subscription's shop: the row is kept with the shop's other rows (docs/scaling.md). */
  shopId: number;
  subscriptionId: string;
  period: number;
  attempt: number;
  amount: number;
  currency: string;
  /** When it was claimed, on the shop's clock, if not the caller's `now`. */
  at?: Date;
  /** Already answered (claimed and charged in one transaction): its status and transaction. */
  status?: string;
  uid?: string | null;
}

/**
 * Claims one attempt at the charge of a period; false when it was already claimed: the key
 * (subscription, period, attempt) makes a second charge of the same attempt impossible.
 */
export async function claimCharge(db: Queryable, c: ChargeClaim, now: Date): Promise<boolean> {
  const s = chargeClaimInsert(c, now);
  const rows = await db.query(s.sql, s.params);
  return rows.length > 0;
}

export function chargeClaimInsert(c: ChargeClaim, now: Date): Statement {
  return {
    sql: `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, created_at, updated_at, shop_id)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, $7) ON CONFLICT DO NOTHING RETURNING period`,
    params: [c.subscriptionId, c.period, c.attempt, c.amount, c.currency, now, c.shopId],
  };
}

/**
 * The charge of a period made and answered in the same batch that creates its subscription: the
 * claim and its answer at once (status as recordCharge would set it).
 */
export function answeredChargeInsert(
  c: { shopId: number; subscriptionId: string; period: number; amount: number; currency: string },
  status: string,
  transactionUid: string,
  now: Date,
): Statement {
  return shaped(ANSWERED_CHARGE_ROWS, [
    c.subscriptionId,
    c.period,
    c.amount,
    c.currency,
    status,
    transactionUid,
    now,
    c.shopId,
  ]);
}

/** A period's first attempt, answered: its row as answeredChargeInsert writes it. */
const ANSWERED_CHARGE_ROWS: RowsShape = {
  key: 'subscription_charges answered',
  arity: 8,
  tuple: (f) =>
    `($${f}, $${f + 1}, 1, $${f + 2}, $${f + 3}, $${f + 4}, $${f + 5}, $${f + 6}, $${f + 6}, $${f + 7})`,
  around: (tuples) =>
    `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, transaction_uid, created_at, updated_at, shop_id)
     VALUES ${tuples}`,
};

/**
 * Claims many attempts in one statement (the billing engine's batch). Each names the next attempt of a
 * period of a subscription its caller holds locked, so none can exist yet: a conflict is an error.
 */
export function chargeClaimsInsert(claims: readonly ChargeClaim[], now: Date): Statement {
  return {
    sql: `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, transaction_uid, created_at, updated_at, shop_id)
     SELECT id, period, attempt, amount, currency, status, uid, at, at, shop_id
     FROM unnest($1::text[], $2::int[], $3::int[], $4::bigint[], $5::text[], $6::timestamptz[], $7::text[],
       $8::uuid[], $9::int[]) AS c (id, period, attempt, amount, currency, at, status, uid, shop_id)`,
    params: [
      claims.map((c) => c.subscriptionId),
      claims.map((c) => c.period),
      claims.map((c) => c.attempt),
      claims.map((c) => c.amount),
      claims.map((c) => c.currency),
      claims.map((c) => c.at ?? now),
      claims.map((c) => c.status ?? 'pending'),
      claims.map((c) => c.uid ?? null),
      claims.map((c) => c.shopId),
    ],
  };
}

/** The gateway's answer to one attempt, for `chargesRecord`. */
export interface ChargeAnswer {
  subscriptionId: string;
  period: number;
  attempt: number;
  status: string;
  /** The gateway's transaction; null keeps the one already recorded. */
  uid: string | null;
  at: Date;
}

const RECORD_MANY = `UPDATE subscription_charges c SET status = v.status,
    transaction_uid = COALESCE(v.uid, c.transaction_uid), updated_at = v.at
  FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::uuid[], $6::timestamptz[])
    AS v (id, period, attempt, status, uid, at)
  WHERE c.subscription_id = v.id AND c.period = v.period AND c.attempt = v.attempt`;

/**
 * Records the answers to many attempts in one statement (one text for one attempt or a batch of
 * renewals, so it is prepared once). Each attempt is held locked by its caller.
 */
export function chargesRecord(answers: readonly ChargeAnswer[]): Statement {
  return {
    sql: RECORD_MANY,
    params: [
      answers.map((a) => a.subscriptionId),
      answers.map((a) => a.period),
      answers.map((a) => a.attempt),
      answers.map((a) => a.status),
      answers.map((a) => a.uid),
      answers.map((a) => a.at),
    ],
  };
}

/**
 * Locks an attempt at the charge of `period` while it still waits for an answer; undefined once an
 * answer was recorded, so two settlers (a read and the 3-D Secure page, say) apply one answer once.
 */
export async function lockOpenCharge(
  db: Tx,
  subscriptionId: string,
  period: number,
  attempt: number,
): Promise<ChargeRow | undefined> {
  const [row] = await db.query<ChargeRow>(
    `SELECT * FROM subscription_charges
     WHERE subscription_id = $1 AND period = $2 AND attempt = $3 AND ${OPEN_CHARGE} FOR UPDATE`,
    [subscriptionId, period, attempt],
  );
  return row;
}

/**
 * Locks the claimed, unanswered attempts of these subscriptions (the batch of renewals the billing
 * engine planned); one taken over or answered by another run meanwhile is not among them.
 */
export function lockPendingAttempts(
  tx: Tx,
  subscriptionIds: readonly string[],
): Promise<{ subscription_id: string; period: number; attempt: number }[]> {
  return tx.query(
    `SELECT subscription_id, period, attempt FROM subscription_charges
     WHERE subscription_id = ANY($1::text[]) AND status = 'pending' FOR UPDATE`,
    [subscriptionIds],
  );
}

/**
 * Marks an attempt still open as looked at `at`: whoever asks about open attempts once their lease
 * is over (billing, for cancelled subscriptions) asks about it again a lease later, not at once.
 */
export async function touchOpenAttempt(
  db: Queryable,
  a: { subscription_id: string; period: number; attempt: number },
  at: Date,
): Promise<void> {
  await db.query(
    `UPDATE subscription_charges SET updated_at = $4
     WHERE subscription_id = $1 AND period = $2 AND attempt = $3
       AND (status IN ('pending', 'unknown') OR (status = 'incomplete' AND reversal = 'due'))`,
    [a.subscription_id, a.period, a.attempt, at],
  );
}

/** How many attempts the charge of `period` has had. */
export async function attemptsOf(db: Queryable, subscriptionId: string, period: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM subscription_charges WHERE subscription_id = $1 AND period = $2',
    [subscriptionId, period],
  );
  return row?.n ?? 0;
}

export async function openCharge(db: Queryable, subscriptionId: string): Promise<ChargeRow | undefined> {
  const [row] = await db.query<ChargeRow>(
    `SELECT * FROM subscription_charges WHERE subscription_id = $1 AND ${OPEN_CHARGE}
     ORDER BY period DESC, attempt DESC LIMIT 1`,
    [subscriptionId],
  );
  return row;
}

/**
 * The cancel of a subscription ends its open attempts (decisions.md, "A cancel ends the open
 * charge"): marked so that money one of them takes after all is given back at once. In the cancel's
 * transaction, with the subscription locked; the attempts marked are returned, for the cancel to
 * end them at the gateway once it committed.
 */
export function endOpenAttempts(tx: Tx, subscriptionId: string): Promise<ChargeRow[]> {
  return tx.query<ChargeRow>(
    `UPDATE subscription_charges SET reversal = 'due'
     WHERE subscription_id = $1 AND ${OPEN_CHARGE} RETURNING *`,
    [subscriptionId],
  );
}

/** Successful attempts of cancelled subscriptions whose refund is still due (a crash, a gateway down). */
export function reversalsDue(db: Queryable, limit: number, shopId?: number): Promise<ChargeRow[]> {
  return db.query<ChargeRow>(
    `SELECT * FROM subscription_charges WHERE reversal = 'due' AND status = 'successful'
       AND ($2::int IS NULL OR shop_id = $2) ORDER BY created_at LIMIT $1`,
    [limit, shopId ?? null],
  );
}

/** The refund of an attempt's payment was made: never made again. */
export async function recordReversal(
  db: Queryable,
  a: { subscription_id: string; period: number; attempt: number },
  uid: string,
): Promise<void> {
  await db.query(
    `UPDATE subscription_charges SET reversal = 'refunded', reversal_uid = $4
     WHERE subscription_id = $1 AND period = $2 AND attempt = $3 AND reversal = 'due'`,
    [a.subscription_id, a.period, a.attempt, uid],
  );
}

/**
 * An attempt its subscription's cancel ended that took no money to give back (it failed, or it was
 * a card verification, whose authorization is released anyway): nothing is due any more.
 */
export async function settleReversal(
  tx: Tx,
  a: { subscription_id: string; period: number; attempt: number },
): Promise<void> {
  await tx.query(
    `UPDATE subscription_charges SET reversal = NULL
     WHERE subscription_id = $1 AND period = $2 AND attempt = $3 AND reversal = 'due'`,
    [a.subscription_id, a.period, a.attempt],
  );
}
