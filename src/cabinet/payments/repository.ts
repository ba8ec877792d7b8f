import type { Queryable } from '../../db/db.js';
import type { TransactionRow } from '../../ledger/index.js';
import { EVENTS_WITH_DELIVERY } from '../../notifications/index.js';
import { type ListStore, walkIndex } from '../query.js';

/** The cabinet's reads of the ledger: the payments list, a payment's events, and form nonces. */

export const PAYMENT_TYPES = ['payment', 'authorization', 'capture', 'void', 'refund', 'credit'] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
export const PAYMENT_STATUSES = ['successful', 'failed', 'incomplete', 'pending', 'error'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export interface PaymentFilters {
  status?: PaymentStatus | undefined;
  type?: PaymentType | undefined;
  uid?: string | undefined;
  trackingId?: string | undefined;
  /** Created at or after. */
  from?: Date | undefined;
  /** Created before. */
  to?: Date | undefined;
}

export type PaymentListRow = Pick<
  TransactionRow,
  | 'uid'
  | 'type'
  | 'status'
  | 'amount'
  | 'currency'
  | 'description'
  | 'tracking_id'
  | 'test'
  | 'card'
  | 'parent_uid'
  | 'created_at'
> & { seq: string };

const GATEWAY_TYPES_SQL = PAYMENT_TYPES.map((t) => `'${t}'`).join(', ');

// Transactions are numbered (seq) in the order they are written, a moment after their created_at:
// rows written at once may swap places by that moment, never by more than this.
const SWAP_MS = 10_000;

/**
 * The seq range a date filter covers, found by the (shop_id, created_at) index of 020, so the page
 * itself scans (shop_id, seq) from the right place instead of skipping every newer row: the largest
 * seq created before `to`, and the smallest created at or after `from`. Null when no row qualifies.
 */
async function seqBounds(
  db: ListStore,
  shopId: number,
  from: Date | undefined,
  to: Date | undefined,
): Promise<{ low: number | undefined; high: number | undefined; none: boolean }> {
  let low: number | undefined;
  let high: number | undefined;
  if (to) {
    // The newest row created before `to`, and every row created up to SWAP_MS before it: any row
    // created earlier than that was numbered before it.
    const [row] = await walkIndex<{ seq: string | null }>(
      db,
      // The window's rows in created_at order: with sorts off (walkIndex), only the (shop_id,
      // created_at) index gives that order, so no plan can read the shop's other rows instead.
      `SELECT max(seq) AS seq FROM (SELECT seq FROM transactions
       WHERE shop_id = $1 AND created_at < $2
         AND created_at >= (SELECT created_at FROM transactions WHERE shop_id = $1 AND created_at < $2
                            ORDER BY created_at DESC LIMIT 1) - $3 * interval '1 millisecond'
       ORDER BY created_at DESC) w`,
      [shopId, to, SWAP_MS],
    );
    if (row?.seq === null || row?.seq === undefined) return { low, high, none: true };
    high = Number(row.seq);
  }
  if (from) {
    // The oldest row created at or after `from`, and every row created up to SWAP_MS after it.
    const [row] = await walkIndex<{ seq: string | null }>(
      db,
      `SELECT min(seq) AS seq FROM (SELECT seq FROM transactions
       WHERE shop_id = $1 AND created_at >= $2
         AND created_at <= (SELECT created_at FROM transactions WHERE shop_id = $1 AND created_at >= $2
                            ORDER BY created_at LIMIT 1) + $3 * interval '1 millisecond'
       ORDER BY created_at) w`,
      [shopId, from, SWAP_MS],
    );
    if (row?.seq === null || row?.seq === undefined) return { low, high, none: true };
    low = Number(row.seq);
  }
  return { low, high, none: false };
}

/**
 * One page of a shop's gateway transactions, newest first, `size + 1` rows. Status and type come
 * from closed lists and are written into the statement, so PostgreSQL can use the partial indexes
 * of 021 for the rare values; everything people type is a parameter.
 */
export async function listPayments(
  db: ListStore,
  shopId: number,
  f: PaymentFilters,
  after: number | undefined,
  size: number,
): Promise<PaymentListRow[]> {
  const bounds = await seqBounds(db, shopId, f.from, f.to);
  if (bounds.none) return [];
  const where = ['shop_id = $1'];
  const values: unknown[] = [shopId, size + 1];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (f.type && (PAYMENT_TYPES as readonly string[]).includes(f.type)) where.push(`type = '${f.type}'`);
  else where.push(`type IN (${GATEWAY_TYPES_SQL})`);
  if (f.status && (PAYMENT_STATUSES as readonly string[]).includes(f.status))
    where.push(`status = '${f.status}'`);
  // A uid is one row at most: read by its key, not in the list's order (walkIndex turns sorting off).
  if (f.uid) where.push(`uid = ${param(f.uid)}::uuid`);
  if (f.trackingId) where.push(`tracking_id = ${param(f.trackingId)}`);
  if (f.from) where.push(`created_at >= ${param(f.from)}`);
  if (f.to) where.push(`created_at < ${param(f.to)}`);
  if (bounds.low !== undefined) where.push(`seq >= ${param(bounds.low)}`);
  if (bounds.high !== undefined) where.push(`seq <= ${param(bounds.high)}`);
  if (after !== undefined) where.push(`seq < ${param(after)}`);
  return walkIndex<PaymentListRow>(
    db,
    `SELECT seq, uid, type, status, amount, currency, description, tracking_id, test, card, parent_uid,
            created_at
       FROM transactions WHERE ${where.join(' AND ')}${f.uid ? '' : ' ORDER BY seq DESC'} LIMIT $2`,
    values,
  );
}

export interface PaymentEvent {
  id: string;
  event: string;
  status: 'none' | 'pending' | 'delivered' | 'failed';
  attempts: number;
  url: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** The notifications about one transaction, oldest first. */
export function eventsOf(db: Queryable, shopId: number, uid: string): Promise<PaymentEvent[]> {
  return db.query<PaymentEvent>(
    `SELECT e.id, e.event, coalesce(d.status, 'none') AS status, coalesce(d.attempts, 0) AS attempts, e.url,
            e.created_at, d.delivered_at
       FROM ${EVENTS_WITH_DELIVERY} WHERE e.resource_id = $1 AND e.shop_id = $2 ORDER BY e.id LIMIT 100`,
    [uid, shopId],
  );
}

/**
 * Takes a form's one-time token inside the action's transaction: true the first time; false when
 * the form was already posted (a concurrent second post waits for the first to commit, then sees it).
 */
export async function takeNonce(db: Queryable, shopId: number, nonce: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO cabinet_form_nonces (nonce, shop_id, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (nonce, shop_id) DO NOTHING RETURNING nonce`,
    [nonce, shopId, now],
  );
  return rows.length === 1;
}

/** An action the gateway refused gives its form's token back: the corrected form may be posted. */
export async function releaseNonce(db: Queryable, shopId: number, nonce: string): Promise<void> {
  await db.query('DELETE FROM cabinet_form_nonces WHERE nonce = $1 AND shop_id = $2 AND result_uid IS NULL', [
    nonce,
    shopId,
  ]);
}

export async function recordNonceResult(
  db: Queryable,
  shopId: number,
  nonce: string,
  uid: string,
): Promise<void> {
  await db.query('UPDATE cabinet_form_nonces SET result_uid = $2 WHERE nonce = $1 AND shop_id = $3', [
    nonce,
    uid,
    shopId,
  ]);
}

/** The transaction an already posted form created, if it belongs to this shop. */
export async function nonceResult(db: Queryable, shopId: number, nonce: string): Promise<string | undefined> {
  const [row] = await db.query<{ result_uid: string | null }>(
    'SELECT result_uid FROM cabinet_form_nonces WHERE nonce = $1 AND shop_id = $2',
    [nonce, shopId],
  );
  return row?.result_uid ?? undefined;
}
