import { type MoneyActionRequest, sendMoneyAction } from '../../charging/index.js';
import type { Ctx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import type { TransactionAnswer } from '../../gateway/index.js';
import type { TransactionRow } from '../../ledger/index.js';
import { nonceResult, recordNonceResult, releaseNonce, takeNonce } from './repository.js';

/**
 * Capture, void and refund from the cabinet: the gateway's own verbs (the API's /transactions/captures,
 * /voids, /refunds), sent through the charging module to the gateway the deployment is configured
 * with (in process, or GATEWAY_URL), so amounts, limits and refusals are the gateway's. Each form
 * carries a one-time token, taken (committed) before the gateway is asked and sent as the action's
 * gateway idempotency key: a form posted twice acts once, no transaction is held across the call,
 * and an action the gateway refuses gives its token back, so the corrected form can be posted.
 */

export const ACTIONS = ['capture', 'void', 'refund'] as const;
export type Action = (typeof ACTIONS)[number];

export const isAction = (v: string): v is Action => (ACTIONS as readonly string[]).includes(v);

/** A nonce as the confirmation page makes it (a UUID); anything else is no form of ours. */
export const isNonce = (v: unknown): v is string =>
  typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v);

export interface ActionInput {
  nonce: string;
  /** Minor units; undefined for a void, which releases the whole authorization. */
  amount: number | undefined;
  reason: string | undefined;
}

export type ActionOutcome =
  | { repeated: false; transaction: TransactionAnswer }
  | { repeated: true; uid: string | undefined };

export async function runAction(
  ctx: Ctx,
  action: Action,
  parentUid: string,
  input: ActionInput,
): Promise<ActionOutcome> {
  const request: MoneyActionRequest = { parent_uid: parentUid };
  if (input.amount !== undefined) request.amount = input.amount;
  if (action === 'refund') request.reason = input.reason ?? '';
  if (!(await takeNonce(ctx.db, ctx.shop.id, input.nonce, ctx.clock.now())))
    return { repeated: true, uid: await nonceResult(ctx.db, ctx.shop.id, input.nonce) };
  let transaction: TransactionAnswer;
  try {
    transaction = await sendMoneyAction(ctx, action, request, `kopek-cabinet:${ctx.shop.id}:${input.nonce}`);
  } catch (err) {
    // Refused: nothing moved, and the form may be corrected and posted again. Any other failure
    // keeps the token taken: the action may have been done, and is never done a second time.
    if (err instanceof ApiError && (err.code === 'validation' || err.code === 'not_found'))
      await releaseNonce(ctx.db, ctx.shop.id, input.nonce);
    throw err;
  }
  await recordNonceResult(ctx.db, ctx.shop.id, input.nonce, transaction.uid);
  return { repeated: false, transaction };
}

/** What a transaction allows now, from its children (the gateway decides again when it is asked). */
export function availableActions(
  t: Pick<TransactionAnswer, 'type' | 'status' | 'amount'>,
  children: Pick<TransactionRow, 'type' | 'status' | 'amount'>[],
): { actions: Action[]; refunded: number; left: number } {
  const done = (type: string) => children.filter((c) => c.type === type && c.status === 'successful');
  const refunded = done('refund').reduce((sum, c) => sum + Number(c.amount), 0);
  const left = Math.max(0, t.amount - refunded);
  const actions: Action[] = [];
  if (t.status !== 'successful') return { actions, refunded, left };
  if (t.type === 'authorization' && done('capture').length === 0 && done('void').length === 0)
    actions.push('capture', 'void');
  if ((t.type === 'payment' || t.type === 'capture') && left > 0) actions.push('refund');
  return { actions, refunded, left };
}
