import type { Queryable, Statement, Tx } from '../db/db.js';
import type { SubscriptionRow } from './repository.js';

/**
 * The record of each billing period's charge of a subscription (table subscription_charges): its
 * claim, the gateway's answer, and the way back from a transaction to its subscription.
 */

/** Charge statuses that still wait for the gateway's final answer. */
const OPEN_CHARGE = "status IN ('pending', 'unknown', 'incomplete')";

export interface ChargeRow {
  subscription_id: string;
  period: number;
  amount: number;
  currency: string;
  status: string;
  transaction_uid: string | null;
  attempts: number;
}

/** Claims the charge of one period; false when it was already claimed (never charge twice). */
export async function claimCharge(
  db: Queryable,
  c: { subscriptionId: string; period: number; amount: number; currency: string },
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO subscription_charges (subscription_id, period, amount, currency, status, attempts, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'pending', 1, $5, $5) ON CONFLICT DO NOTHING RETURNING period`,
    [c.subscriptionId, c.period, c.amount, c.currency, now],
  );
  return rows.length > 0;
}

/**
 * The charge of a period made and answered in the same batch that creates its subscription: the
 * claim and its answer at once (status as recordCharge would set it).
 */
export function answeredChargeInsert(
  c: { subscriptionId: string; period: number; amount: number; currency: string },
  status: string,
  transactionUid: string,
  now: Date,
): Statement {
  return {
    sql: `INSERT INTO subscription_charges (subscription_id, period, amount, currency, status, transaction_uid, attempts, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7)`,
    params: [c.subscriptionId, c.period, c.amount, c.currency, status, transactionUid, now],
  };
}

export async function recordCharge(
  db: Queryable,
  subscriptionId: string,
  period: number,
  status: string,
  transactionUid: string | null,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE subscription_charges SET status = $3, transaction_uid = COALESCE($4, transaction_uid), updated_at = $5
     WHERE subscription_id = $1 AND period = $2`,
    [subscriptionId, period, status, transactionUid, now],
  );
}

/**
 * Locks the charge of `period` while it still waits for an answer; undefined once an answer was
 * recorded, so two settlers (a read and the 3-D Secure page, say) apply one answer once.
 */
export async function lockOpenCharge(
  db: Tx,
  subscriptionId: string,
  period: number,
): Promise<ChargeRow | undefined> {
  const [row] = await db.query<ChargeRow>(
    `SELECT * FROM subscription_charges WHERE subscription_id = $1 AND period = $2 AND ${OPEN_CHARGE} FOR UPDATE`,
    [subscriptionId, period],
  );
  return row;
}

export async function openCharge(db: Queryable, subscriptionId: string): Promise<ChargeRow | undefined> {
  const [row] = await db.query<ChargeRow>(
    `SELECT * FROM subscription_charges WHERE subscription_id = $1 AND ${OPEN_CHARGE}
     ORDER BY period DESC LIMIT 1`,
    [subscriptionId],
  );
  return row;
}

/** The subscription whose charge is this gateway transaction (after a 3-D Secure step, say). */
export async function subscriptionOfTransaction(
  db: Queryable,
  uid: string,
): Promise<SubscriptionRow | undefined> {
  const [row] = await db.query<SubscriptionRow>(
    `SELECT s.* FROM subscriptions s JOIN subscription_charges c ON c.subscription_id = s.id
     WHERE c.transaction_uid = $1`,
    [uid],
  );
  return row;
}
