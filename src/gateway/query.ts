import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import {
  findByTrackingId,
  findTransaction,
  lockTransaction,
  type TransactionRow,
} from '../ledger/repository.js';
import { type TransactionAnswer, toAnswer } from './answer.js';
import { awaitsLateAnswer, settleLateAnswer } from './late-answer.js';

/** Status queries: by uid and by tracking_id, the shop's own transactions only. */

// Card-gateway types; proofs and other ledger entries are answered by their own endpoints.
const GATEWAY_TYPES = new Set(['payment', 'authorization', 'capture', 'void', 'refund', 'credit']);

async function current(ctx: Ctx, row: TransactionRow): Promise<TransactionRow> {
  const now = ctx.clock.now();
  if (!awaitsLateAnswer(row, now)) return row;
  return ctx.db.tx(async (tx) => {
    const locked = await lockTransaction(tx, ctx.shop.id, row.uid);
    return locked ? settleLateAnswer(tx, locked, now, ctx.config.gatewayUrl) : row;
  });
}

/** `GET /transactions/{uid}`; unknown, another shop's and malformed uids are all "Record not found". */
export async function getTransaction(ctx: Ctx, uid: string): Promise<TransactionAnswer> {
  const row = await findTransaction(ctx.db, ctx.shop.id, uid);
  if (!row || !GATEWAY_TYPES.has(row.type)) throw ApiError.notFound();
  return toAnswer(await current(ctx, row), ctx.config.gatewayUrl);
}

/** `GET /v2/transactions/tracking_id/{tracking_id}`: every match, oldest (the first) first; maybe none. */
export async function transactionsByTrackingId(ctx: Ctx, trackingId: string): Promise<TransactionAnswer[]> {
  const rows = (await findByTrackingId(ctx.db, ctx.shop.id, trackingId)).filter((r) =>
    GATEWAY_TYPES.has(r.type),
  );
  const answers: TransactionAnswer[] = [];
  for (const row of rows) answers.push(toAnswer(await current(ctx, row), ctx.config.gatewayUrl));
  return answers;
}
