import { createHash } from 'node:crypto';
import { cardInsert, cardInsertCte, type NewCardRow } from '../cards/index.js';
import { type Queryable, type Statement, sqlText, type Tx } from '../db/db.js';
import {
  type NewTransaction,
  storedTransactionRow,
  type TransactionRow,
  transactionInsert,
  transactionInsertCtes,
} from '../ledger/index.js';
import { type Announcement, delivered, eventsInsert } from '../notifications/index.js';

/** The gateway's questions to the ledger. All run inside the verb's transaction. */

// Namespaces the advisory locks of card charges away from other users of pg_advisory_xact_lock.
const CARD_LOCK_SPACE = 727_002;

/**
 * Serialises charges of one card within one shop until the transaction ends, so the duplicate check
 * and "charged before" see every earlier charge of the card, even one made a moment ago in parallel.
 */
export async function lockCardCharges(tx: Tx, shopId: number, stamp: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CARD_LOCK_SPACE, `${shopId}:${stamp}`]);
}

export interface ChargeFingerprint {
  shopId: number;
  type: string;
  stamp: string;
  amount: number;
  currency: string;
  trackingId: string | null;
}

/** The duplicate check's key: the card stamp is a keyed hash already, so this reveals nothing. */
export function fingerprintKey(f: ChargeFingerprint): string {
  return createHash('sha256')
    .update(JSON.stringify([f.type, f.stamp, f.amount, f.currency, f.trackingId]))
    .digest('base64url');
}

export interface NewCharge {
  /** A card the request brought in full: stored by the same statement. */
  card?: NewCardRow;
  fingerprint: ChargeFingerprint;
  /**
   * false (duplicate_check false): the charge is left out of the duplicate check, neither checked
   * nor holding its fingerprint for later charges, as recurring charges with their own unique
   * tracking ids are.
   */
  check: boolean;
  /** The start of the duplicate window. */
  since: Date;
  transaction: NewTransaction;
  /** The event announcing the transaction, written by the same statement (none while pending). */
  event: Announcement | undefined;
}

/**
 * A charge as one statement: its card (when new), its fingerprint, the ledger row and the event that
 * announces it (a CTE, not a statement of its own, so a charge stays one round trip). The fingerprint
 * row decides the duplicate check: a charge whose fingerprint is held by a charge younger than
 * `since` writes neither ledger row nor event and returns none; the caller then records it as a
 * declined duplicate.
 * A concurrent charge of the same fingerprint waits on the key until the first commits, so two
 * identical charges sent at once are never both approved.
 */
export function chargeStatement(c: NewCharge, now: Date, returning: '*' | 'uid' = '*'): Statement {
  const head = c.check
    ? [c.fingerprint.shopId, fingerprintKey(c.fingerprint), c.transaction.uid, now, c.since]
    : [];
  const card = c.card ? cardInsertCte(c.card, now, head.length + 1) : undefined;
  const first = head.length + (card?.values.length ?? 0) + 1;
  const insert = transactionInsertCtes(
    c.transaction,
    now,
    first,
    c.check ? 'fingerprint' : undefined,
    c.event,
  );
  const sql = sqlText(
    `charge ${c.check ? 'checked' : 'unchecked'} ${card ? 'card' : 'token'} ${c.event ? 'announced' : 'silent'} ${returning}`,
    () => {
      const fingerprint = `fingerprint AS (
       INSERT INTO charge_fingerprints AS f (shop_id, fingerprint, first_uid, at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (shop_id, fingerprint) DO UPDATE SET first_uid = excluded.first_uid, at = excluded.at
       WHERE f.at <= $5
       RETURNING 1
     )`;
      const ctes = [...(c.check ? [fingerprint] : []), ...(card ? [card.sql] : []), insert.sql];
      return `WITH ${ctes.join(', ')} SELECT ${returning} FROM created`;
    },
  );
  const wakes = c.event !== undefined && delivered(c.event);
  return { sql, params: [...head, ...(card?.values ?? []), ...insert.values], wakes };
}

/**
 * A charge decided beforehand and left out of the duplicate check (planPayment), as rows: its card
 * (when new), the ledger row and the event that announces it, each a statement of rows that a group
 * of writes may share with other charges' (db/rows.ts). They go in the caller's batch, so the charge
 * and what it pays for commit together.
 */
export function plannedChargeStatements(c: NewCharge, now: Date): Statement[] {
  if (c.check) throw new Error('a checked charge is decided by its statement: chargeStatement');
  return [
    ...(c.card ? [cardInsert(c.card, now)] : []),
    transactionInsert(c.transaction, now),
    ...(c.event ? [eventsInsert([c.event])] : []),
  ];
}

/**
 * Runs chargeStatement. The ledger row is known in full beforehand, so only its uid comes back:
 * the stored row when the charge was recorded, undefined when its fingerprint was held.
 */
export async function insertCharge(
  db: Queryable,
  c: NewCharge,
  now: Date,
): Promise<TransactionRow | undefined> {
  const statement = chargeStatement(c, now, 'uid');
  const rows = await db.query(statement);
  return rows.length > 0 ? storedTransactionRow(c.transaction, now) : undefined;
}

/** The charge holding a fingerprint: what a duplicate names as the first. */
export async function firstChargeOf(db: Queryable, f: ChargeFingerprint): Promise<string | undefined> {
  const [row] = await db.query<{ first_uid: string }>(
    'SELECT first_uid FROM charge_fingerprints WHERE shop_id = $1 AND fingerprint = $2',
    [f.shopId, fingerprintKey(f)],
  );
  return row?.first_uid;
}

/**
 * Forgets fingerprints older than the window: they decide nothing any more. Only their count comes
 * back: after a busy half minute a sweep deletes tens of thousands of rows, and reading one row per
 * deleted fingerprint would hold up every request of that moment.
 */
export async function sweepFingerprints(db: Queryable, before: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM charge_fingerprints WHERE at < $1 RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [before],
  );
  return row?.n ?? 0;
}

/**
 * Whether the shop has a successful payment or authorization of this card, among the charges marked
 * `remembered_card` (those of the sandbox card whose outcome depends on its history).
 */
export async function hasSuccessfulCharge(db: Queryable, shopId: number, stamp: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM transactions
     WHERE shop_id = $1 AND card ->> 'stamp' = $2 AND details ? 'remembered_card'
       AND type IN ('payment', 'authorization') AND status = 'successful'
     LIMIT 1`,
    [shopId, stamp],
  );
  return rows.length > 0;
}

/** The first refund of the same parent and amount since `since`, if any (the refund duplicate check). */
export async function findDuplicateRefund(
  db: Queryable,
  parentUid: string,
  amount: number,
  since: Date,
): Promise<string | undefined> {
  const [row] = await db.query<{ uid: string }>(
    `SELECT uid FROM transactions
     WHERE parent_uid = $1 AND type = 'refund' AND amount = $2 AND created_at > $3
       AND details ->> 'duplicate_of' IS NULL
     ORDER BY seq LIMIT 1`,
    [parentUid, amount, since],
  );
  return row?.uid;
}
