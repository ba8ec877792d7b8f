import { randomUUID } from 'node:crypto';
import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { Tx } from '../db/db.js';
import { childrenOf, lockTransaction, type TransactionRow } from '../ledger/index.js';
import { formatMoney } from '../money/currencies.js';
import { insertAnnounced } from './announce.js';
import { PROCESSED, sectionFor, type TransactionAnswer, toAnswer } from './answer.js';
import { DUPLICATE_WINDOW_MS, recordDuplicate } from './charge.js';
import { type ChildInput, type ChildKind, parseChild, requestOf } from './input.js';
import { settleLateAnswer } from './late-answer.js';
import { findDuplicateRefund } from './repository.js';

/**
 * Captures, voids and refunds act on a parent transaction of the same shop. The parent is locked for
 * the whole check-then-record, so two requests at once cannot both capture, void, or refund beyond
 * what was paid: the second waits and then sees the first's child. A child is announced like any
 * transaction, to the parent's notification_url: the request for a child has none of its own, and a
 * shop that asked to hear about a payment wants to hear about its refund.
 */

export const ChildMsg = {
  captureNotAuthorization: "Transaction can't be captured: only an authorization can be captured",
  captureNotSuccessful: "Transaction can't be captured: the authorization was not successful",
  alreadyCaptured: "Transaction can't be captured: it has already been captured",
  captureVoided: "Transaction can't be captured: it has been voided",
  voidNotAuthorization: "Transaction can't be voided: only an authorization can be voided",
  voidNotSuccessful: "Transaction can't be voided: the authorization was not successful",
  alreadyVoided: "Transaction can't be voided: it has already been voided",
  voidCaptured: "Transaction can't be voided: it has been captured; refund the capture instead",
  refundNotPaid: "Transaction can't be refunded: only a successful payment or capture can be refunded",
  fullyRefunded: "Transaction can't be refunded: it has been refunded in full",
  tooMuch: (limit: number, currency: string, what: string) =>
    `can't be greater than ${limit} (${formatMoney(limit, currency)}), ${what}`,
  duplicateRefund: (first: string) =>
    `Duplicate refund: the same amount was refunded from this transaction within 30 seconds (transaction ${first}). Check its status, or send duplicate_check false`,
} as const;

const refuse = (message: string) => ApiError.base('validation', message);
const has = (children: TransactionRow[], type: string) =>
  children.some((c) => c.type === type && c.status === 'successful');

function childRow(ctx: Ctx, parent: TransactionRow, kind: ChildKind, input: ChildInput, amount: number) {
  return {
    uid: randomUUID(),
    shop_id: ctx.shop.id,
    type: kind,
    amount,
    currency: parent.currency,
    description: parent.description,
    tracking_id: input.trackingId,
    parent_uid: parent.uid,
    test: parent.test,
    language: parent.language,
    card_token: parent.card_token,
    card: parent.card,
    notification_url: parent.notification_url,
  };
}

function successful(
  ctx: Ctx,
  tx: Tx,
  parent: TransactionRow,
  kind: ChildKind,
  input: ChildInput,
  amount: number,
  now: Date,
) {
  const details: Record<string, unknown> = { section: sectionFor(kind, 'successful', null) };
  if (input.reason !== null) details.reason = input.reason;
  return insertAnnounced(
    tx,
    {
      ...childRow(ctx, parent, kind, input, amount),
      status: 'successful',
      message: PROCESSED,
      paid_at: kind === 'capture' ? now : null,
      details,
    },
    now,
    ctx.config.gatewayUrl,
  );
}

async function checkCapture(
  parent: TransactionRow,
  children: TransactionRow[],
  amount: number,
): Promise<void> {
  if (parent.type !== 'authorization') throw refuse(ChildMsg.captureNotAuthorization);
  if (parent.status !== 'successful') throw refuse(ChildMsg.captureNotSuccessful);
  if (has(children, 'void')) throw refuse(ChildMsg.captureVoided);
  if (has(children, 'capture')) throw refuse(ChildMsg.alreadyCaptured);
  if (amount > parent.amount)
    throw ApiError.validation({
      amount: [ChildMsg.tooMuch(parent.amount, parent.currency, 'the authorized amount')],
    });
}

async function checkVoid(parent: TransactionRow, children: TransactionRow[], amount: number): Promise<void> {
  if (parent.type !== 'authorization') throw refuse(ChildMsg.voidNotAuthorization);
  if (parent.status !== 'successful') throw refuse(ChildMsg.voidNotSuccessful);
  if (has(children, 'void')) throw refuse(ChildMsg.alreadyVoided);
  if (has(children, 'capture')) throw refuse(ChildMsg.voidCaptured);
  if (amount > parent.amount)
    throw ApiError.validation({
      amount: [ChildMsg.tooMuch(parent.amount, parent.currency, 'the authorized amount')],
    });
}

function checkRefund(parent: TransactionRow, children: TransactionRow[], amount: number): void {
  if ((parent.type !== 'payment' && parent.type !== 'capture') || parent.status !== 'successful')
    throw refuse(ChildMsg.refundNotPaid);
  const refunded = children
    .filter((c) => c.type === 'refund' && c.status === 'successful')
    .reduce((sum, c) => sum + c.amount, 0);
  const left = parent.amount - refunded;
  if (left <= 0) throw refuse(ChildMsg.fullyRefunded);
  if (amount > left)
    throw ApiError.validation({
      amount: [ChildMsg.tooMuch(left, parent.currency, 'the amount not yet refunded')],
    });
}

async function run(ctx: Ctx, body: unknown, kind: ChildKind): Promise<TransactionAnswer> {
  const input = parseChild(requestOf(body), kind);
  const now = ctx.clock.now();
  const row = await ctx.db.tx(async (tx) => {
    const locked = await lockTransaction(tx, ctx.shop.id, input.parentUid);
    if (!locked) throw ApiError.notFound();
    const parent = await settleLateAnswer(tx, locked, now, ctx.config.gatewayUrl);
    const children = await childrenOf(tx, parent.uid);
    const amount = input.amount ?? parent.amount;
    if (kind === 'capture') await checkCapture(parent, children, amount);
    else if (kind === 'void') await checkVoid(parent, children, amount);
    else {
      checkRefund(parent, children, amount);
      if (input.duplicateCheck) {
        const first = await findDuplicateRefund(
          tx,
          parent.uid,
          amount,
          new Date(now.getTime() - DUPLICATE_WINDOW_MS),
        );
        if (first) {
          return recordDuplicate(
            tx,
            childRow(ctx, parent, kind, input, amount),
            ChildMsg.duplicateRefund(first),
            first,
            { reason: input.reason },
            now,
            ctx.config.gatewayUrl,
          );
        }
      }
    }
    return successful(ctx, tx, parent, kind, input, amount, now);
  });
  ctx.log.info(
    { uid: row.uid, type: kind, status: row.status, parent_uid: row.parent_uid, shop_id: ctx.shop.id },
    'gateway transaction',
  );
  return toAnswer(row, ctx.config.gatewayUrl);
}

/** `POST /transactions/captures`: settles an authorization, once, for at most the authorized amount. */
export function capture(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'capture');
}

/** `POST /transactions/voids`: releases an uncaptured authorization, once. */
export function voidAuthorization(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'void');
}

/** `POST /transactions/refunds`: returns money of a payment or capture; all refunds add up to at most it. */
export function refund(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'refund');
}
