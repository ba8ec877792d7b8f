import type { Ctx } from '../../context.js';
import { dbWithin } from '../../db/held.js';
import { capture, refund, type TransactionAnswer, voidAuthorization } from '../../gateway/index.js';
import type { TransactionRow } from '../../ledger/index.js';
import { nonceResult, recordNonceResult, takeNonce } from './repository.js';

/**
 * Capture, void and refund from the cabinet: the gateway's own verbs (the API's /transactions/captures,
 * /voids, /refunds), so amounts, limits and refusals are the gateway's. Each form carries a one-time
 * token taken in the same database transaction as the action: a form posted twice acts once, and an
 * action the gateway refuses leaves its token unused.
 */

export const ACTIONS = ['capture', 'void', 'refund'] as const;
export type Action = (typeof ACTIONS)[number];

const VERBS = { capture, void: voidAuthorization, refund } as const;

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
  const request: Record<string, unknown> = { parent_uid: parentUid };
  if (input.amount !== undefined) request.amount = input.amount;
  if (action === 'refund') request.reason = input.reason ?? '';
  const outcome = await ctx.db.tx(async (tx): Promise<ActionOutcome> => {
    if (!(await takeNonce(tx, ctx.shop.id, input.nonce, ctx.clock.now())))
      return { repeated: true, uid: undefined };
    const transaction = await VERBS[action]({ ...ctx, db: dbWithin(tx, ctx.db.kind) }, { request });
    await recordNonceResult(tx, ctx.shop.id, input.nonce, transaction.uid);
    return { repeated: false, transaction };
  });
  if (!outcome.repeated) return outcome;
  return { repeated: true, uid: await nonceResult(ctx.db, ctx.shop.id, input.nonce) };
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
