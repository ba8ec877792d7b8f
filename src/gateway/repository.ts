import type { Queryable, Tx } from '../db/db.js';

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

/** The first charge with the same card, amount, currency and tracking_id since `since`, if any. */
export async function findDuplicateCharge(
  db: Queryable,
  f: ChargeFingerprint,
  since: Date,
): Promise<string | undefined> {
  const [row] = await db.query<{ uid: string }>(
    `SELECT uid FROM transactions
     WHERE shop_id = $1 AND type = $2 AND card ->> 'stamp' = $3 AND amount = $4 AND currency = $5
       AND tracking_id IS NOT DISTINCT FROM $6 AND created_at > $7 AND details ->> 'duplicate_of' IS NULL
     ORDER BY seq LIMIT 1`,
    [f.shopId, f.type, f.stamp, f.amount, f.currency, f.trackingId, since],
  );
  return row?.uid;
}

/** Whether the shop has a successful payment or authorization of this card. */
export async function hasSuccessfulCharge(db: Queryable, shopId: number, stamp: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM transactions
     WHERE shop_id = $1 AND card ->> 'stamp' = $2 AND type IN ('payment', 'authorization') AND status = 'successful'
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
