import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { findByTrackingId, findTransaction, lockTransaction, type TransactionRow } from '../ledger/index.js';
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

/** At most this many matches answer a query by tracking_id, as the platform answers. */
export const TRACKING_ID_MATCHES = 10;

/**
 * `GET /v2/transactions/tracking_id/{tracking_id}`: the newest matches (up to 10), newest first;
 * maybe none. The same list for the in-process client and over HTTP.
 */
export async function transactionsByTrackingId(ctx: Ctx, trackingId: string): Promise<TransactionAnswer[]> {
  const rows = await findByTrackingId(
    ctx.db,
    ctx.shop.id,
    trackingId,
    [...GATEWAY_TYPES],
    TRACKING_ID_MATCHES,
  );
  const answers: TransactionAnswer[] = [];
  for (const row of rows) answers.push(toAnswer(await current(ctx, row), ctx.config.gatewayUrl));
  return answers;
}

/**
 * `GET /transactions/tracking_id/{tracking_id}` (no /v2): the newest match alone, as the platform's
 * Ruby client reads it; none is "Record not found".
 */
export async function newestByTrackingId(ctx: Ctx, trackingId: string): Promise<TransactionAnswer> {
  const [row] = await findByTrackingId(ctx.db, ctx.shop.id, trackingId, [...GATEWAY_TYPES], 1);
  if (!row) throw ApiError.notFound();
  return toAnswer(await current(ctx, row), ctx.config.gatewayUrl);
}
