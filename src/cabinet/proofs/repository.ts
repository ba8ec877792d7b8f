import type { Queryable } from '../../db/db.js';
import { type ListStore, walkIndex } from '../query.js';

/** The cabinet's reads of payment proofs: a page of them and one by its uid (without the bytes). */

export interface ProofListRow {
  seq: string;
  uid: string;
  parent_uid: string;
  file_name: string;
  transaction_reference: string | null;
  content_type: string;
  size: number;
  amount: number;
  currency: string;
  test: boolean;
  /** The comparison with the parent: { status, message }. */
  proof: { status?: string; message?: string } | null;
  created_at: Date;
}

const COLUMNS = `p.seq, p.uid, p.parent_uid, p.file_name, p.transaction_reference, d.content_type, d.size,
  t.amount, t.currency, t.test, t.details -> 'proof' AS proof, p.created_at`;
const FROM = `proofs p JOIN proof_documents d ON d.checksum = p.checksum AND d.shop_id = p.shop_id
  JOIN transactions t ON t.uid = p.uid AND t.shop_id = p.shop_id`;

/** Newest first by the proofs_shop_seq index of 021, or of one transaction by proofs_parent. */
export function listProofPage(
  db: ListStore,
  shopId: number,
  parentUid: string | undefined,
  after: number | undefined,
  size: number,
): Promise<ProofListRow[]> {
  const where = ['p.shop_id = $1'];
  const values: unknown[] = [shopId, size + 1];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (parentUid !== undefined) where.push(`p.parent_uid = ${param(parentUid)}::uuid`);
  if (after !== undefined) where.push(`p.seq < ${param(after)}`);
  return walkIndex<ProofListRow>(
    db,
    `SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(' AND ')} ORDER BY p.seq DESC LIMIT $2`,
    values,
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A shop's proof by its own uid; another shop's or a malformed uid is not found. */
export async function findProof(
  db: Queryable,
  shopId: number,
  uid: string,
): Promise<ProofListRow | undefined> {
  if (!UUID.test(uid)) return undefined;
  const [row] = await db.query<ProofListRow>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE p.shop_id = $1 AND p.uid = $2`,
    [shopId, uid],
  );
  return row;
}
