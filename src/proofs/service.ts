import { randomUUID } from 'node:crypto';
import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { findTransaction, insertTransaction, lockTransaction, type TransactionRow } from '../ledger/index.js';
import { eventInsert } from '../notifications/index.js';
import { type ProofInput, parseProofRequest } from './input.js';
import {
  findDocument,
  insertProofLink,
  latestProofAt,
  type StoredDocument,
  saveDocument,
} from './repository.js';

/**
 * The event of a received proof. Its body is the proof endpoint's own answer, `{"transaction": {...}}`,
 * with `event` beside it, as transaction events are; it goes to the parent's notification_url, the
 * only address a shop gave for what happens to that payment.
 */
export const PROOF_RECEIVED = 'received.proof';

/** The seed's duplicate window: a second proof for one uid within it is refused unless asked for. */
export const DUPLICATE_WINDOW_MS = 30_000;

export interface ProofResult {
  message: string;
  ref_id: string | null;
  gateway_id: number;
  status: 'successful' | 'failed';
}

export interface ProofTransaction {
  uid: string;
  status: string;
  message: string;
  amount: number;
  parent_uid: string;
  currency: string;
  type: 'proof';
  proof: ProofResult;
}

/**
 * Whether the proof matches what it proves. The proof itself is always stored (the outer status);
 * this inner status tells the shop whether the amounts agree, and if not, exactly what differs.
 */
export function compareWithParent(
  input: Pick<ProofInput, 'amount' | 'currency'>,
  parent: Pick<TransactionRow, 'amount' | 'currency'>,
): { status: 'successful' | 'failed'; message: string } {
  const differences: string[] = [];
  if (input.amount !== parent.amount)
    differences.push(`Amount ${input.amount} differs from the transaction amount ${parent.amount}`);
  if (input.currency !== parent.currency)
    differences.push(`currency ${input.currency} differs from ${parent.currency}`);
  if (differences.length === 0) return { status: 'successful', message: 'Proof matches the transaction' };
  const text = differences.join('; ');
  return { status: 'failed', message: text.charAt(0).toUpperCase() + text.slice(1) };
}

function toProofTransaction(row: TransactionRow, seq: number): ProofTransaction {
  const proof = (row.details.proof ?? {}) as Omit<ProofResult, 'gateway_id'>;
  return {
    uid: row.uid,
    status: row.status,
    message: row.message ?? '',
    amount: row.amount,
    parent_uid: row.parent_uid ?? '',
    currency: row.currency,
    type: 'proof',
    proof: { message: proof.message, ref_id: proof.ref_id ?? null, gateway_id: seq, status: proof.status },
  };
}

/**
 * Records a shop's proof of a payment made elsewhere, attached to its transaction `parentUid`.
 * The parent row is locked for the whole check-and-insert, so two simultaneous proofs for one uid
 * are serialised and the second one sees the first inside the duplicate window. The proof is announced
 * (PROOF_RECEIVED) in the same transaction.
 */
export async function submitProof(
  ctx: Ctx,
  parentUid: string,
  body: Record<string, unknown>,
): Promise<ProofTransaction> {
  const input = parseProofRequest(body, ctx.config.proofMaxBytes);
  const { document } = input;
  return ctx.db.tx(async (tx) => {
    const parent = await lockTransaction(tx, ctx.shop.id, parentUid);
    if (!parent) throw ApiError.notFound();
    if (parent.type === 'proof')
      throw ApiError.validation({
        base: ['A proof is attached to the transaction it proves, not to another proof'],
      });
    const now = ctx.clock.now();
    if (!input.skipDuplicateCheck) {
      const last = await latestProofAt(tx, parent.uid);
      if (last && now.getTime() - last.getTime() < DUPLICATE_WINDOW_MS)
        throw ApiError.validation({
          base: [
            `A proof for this transaction was received less than ${DUPLICATE_WINDOW_MS / 1000} seconds ago; ` +
              'send skip_duplicate_check true to submit another one',
          ],
        });
    }
    const result = compareWithParent(input, parent);
    const uid = randomUUID();
    const row = await insertTransaction(
      tx,
      {
        uid,
        shop_id: ctx.shop.id,
        type: 'proof',
        status: 'successful',
        message: 'Proof received',
        amount: input.amount,
        currency: input.currency,
        parent_uid: parent.uid,
        test: parent.test,
        details: { proof: { ...result, ref_id: input.transactionReference } },
      },
      now,
    );
    await saveDocument(tx, ctx.shop.id, document, now);
    await insertProofLink(
      tx,
      {
        uid,
        parentUid: parent.uid,
        shopId: ctx.shop.id,
        checksum: document.checksum,
        fileName: document.fileName,
        transactionReference: input.transactionReference,
      },
      now,
    );
    const answer = toProofTransaction(row, Number((row as TransactionRow & { seq: number }).seq));
    // Written after the row: the answer's gateway_id is the row's sequence number.
    const event = eventInsert({
      shopId: ctx.shop.id,
      resourceType: 'proof',
      resourceId: uid,
      event: PROOF_RECEIVED,
      payload: { transaction: answer, event: PROOF_RECEIVED },
      url: parent.notification_url,
      now,
    });
    await tx.query(event);
    return answer;
  });
}

/**
 * The document behind a uid: the proof's own uid, or a transaction's uid for its newest proof.
 * Unknown, foreign and malformed uids, and transactions without a proof, are all "not found".
 */
export async function getProofDocument(ctx: Ctx, uid: string): Promise<StoredDocument> {
  const tx = await findTransaction(ctx.db, ctx.shop.id, uid);
  const doc = tx ? await findDocument(ctx.db, ctx.shop.id, tx.uid) : undefined;
  if (!doc) throw ApiError.notFound();
  return doc;
}
