import type { Queryable, Tx } from '../db/db.js';

export interface NewProofDocument {
  checksum: string;
  content: Buffer;
  contentType: string;
}

/**
 * Stores a document once per content and shop; a second proof of the shop with the same bytes reuses
 * the row. Kept with the shop's other rows (docs/scaling.md), so two shops sending one file keep a
 * copy each.
 */
export async function saveDocument(tx: Tx, shopId: number, doc: NewProofDocument, now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO proof_documents (checksum, shop_id, content, content_type, size, created_at)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (checksum, shop_id) DO NOTHING`,
    [doc.checksum, shopId, doc.content, doc.contentType, doc.content.length, now],
  );
}

export interface ProofLink {
  uid: string;
  parentUid: string;
  shopId: number;
  checksum: string;
  fileName: string;
  transactionReference: string | null;
}

export async function insertProofLink(tx: Tx, link: ProofLink, now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO proofs (uid, parent_uid, shop_id, checksum, file_name, transaction_reference, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [link.uid, link.parentUid, link.shopId, link.checksum, link.fileName, link.transactionReference, now],
  );
}

/** When the newest proof of a parent was received; read under the parent's row lock. */
export async function latestProofAt(tx: Tx, parentUid: string): Promise<Date | undefined> {
  const [row] = await tx.query<{ created_at: Date }>(
    'SELECT created_at FROM proofs WHERE parent_uid = $1 ORDER BY seq DESC LIMIT 1',
    [parentUid],
  );
  return row?.created_at;
}

export interface StoredDocument {
  proof_uid: string;
  file_name: string;
  content_type: string;
  content: Buffer;
}

/**
 * The document of a shop's proof, by the proof's own uid or by its parent's uid (then the newest
 * proof of that parent). A parent is never itself a proof, so one uid cannot mean both.
 */
export async function findDocument(
  db: Queryable,
  shopId: number,
  uid: string,
): Promise<StoredDocument | undefined> {
  // Both stores give bytea as a Buffer (pg's own parser; PGlite's is db/pglite.ts byteaCodecs).
  const [row] = await db.query<StoredDocument>(
    `SELECT p.uid AS proof_uid, p.file_name, d.content_type, d.content
       FROM proofs p JOIN proof_documents d ON d.checksum = p.checksum AND d.shop_id = p.shop_id
      WHERE p.shop_id = $1 AND (p.uid = $2 OR p.parent_uid = $2)
      ORDER BY p.seq DESC LIMIT 1`,
    [shopId, uid],
  );
  return row;
}

/** How many stored documents have this checksum (0 or 1 per shop that sent it): for checking de-duplication. */
export async function countDocuments(db: Queryable, checksum: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM proof_documents WHERE checksum = $1',
    [checksum],
  );
  return row?.n ?? 0;
}
