import { lockOpenCharge, openCharge } from '../charging/index.js';
import { type Ctx, type Services, shopCtx } from '../context.js';
import type { Tx } from '../db/db.js';
import { gatewayClient, type TransactionAnswer } from '../gateway/client.js';
import { findPlanOfShop, type Plan } from '../plans/service.js';
import { findShopRow, toShop } from '../shops/repository.js';
import { lockSubscription, type SubscriptionRow, subscriptionOfTransaction } from './repository.js';
import { rulesFor } from './rules.js';
import { applyTransition } from './state.js';
import { type ChargeOutcome, transition } from './transitions.js';
import { summarize } from './view.js';

const FINAL = new Set(['successful', 'failed', 'error']);
const OUTCOMES = new Set(['successful', 'failed', 'error', 'incomplete', 'pending']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The gateway's tracking id of one charge attempt: unique, so an unknown outcome is resolved by query.
 * The first attempt of a period keeps the plain form `sbs_…-N`.
 */
export function chargeTrackingId(subscriptionId: string, period: number, attempt = 1): string {
  return attempt === 1 ? `${subscriptionId}-${period}` : `${subscriptionId}-${period}-${attempt}`;
}

export function outcomeOf(answer: TransactionAnswer): ChargeOutcome {
  return OUTCOMES.has(answer.status) ? (answer.status as ChargeOutcome) : 'pending';
}

/**
 * Records the gateway's answer to a charge attempt and moves the subscription accordingly, once:
 * the attempt is locked while still open, so whoever comes second (a concurrent read, the 3-D Secure
 * page, the request that made the charge) finds it answered and changes nothing. A subscription
 * cancelled meanwhile stays cancelled. Lock order: subscription, then charge (as everywhere).
 */
export async function applyChargeAnswer(
  tx: Tx,
  ctx: Pick<Ctx, 'shop' | 'clock'>,
  subscriptionId: string,
  plan: Plan,
  charge: { period: number; attempt: number },
  answer: TransactionAnswer,
): Promise<SubscriptionRow> {
  const sub = await lockSubscription(tx, ctx.shop.id, subscriptionId);
  if (!sub) throw new Error(`subscription ${subscriptionId} vanished while its charge was answered`);
  if (!(await lockOpenCharge(tx, subscriptionId, charge.period, charge.attempt))) return sub;
  const now = ctx.clock.now();
  const t = transition(
    sub,
    plan,
    {
      kind: 'charge_answered',
      period: charge.period,
      outcome: outcomeOf(answer),
      last: summarize(answer),
      message: answer.message,
    },
    now,
    rulesFor(ctx.shop),
  );
  return applyTransition(tx, sub, plan, t, now, { ...charge, uid: answer.uid });
}

/**
 * An attempt still open (a 3-D Secure step, or a timeout with unknown outcome) is resolved by asking
 * the gateway, never by charging again: by uid when known, else by the attempt's tracking id. A
 * final answer moves the subscription as the answer would have; otherwise nothing changes. Also for
 * a subscription cancelled while its charge was open: the money may have moved.
 */
export async function settleOpenCharge(ctx: Ctx, row: SubscriptionRow): Promise<SubscriptionRow> {
  if (!row.card_token) return row;
  const charge = await openCharge(ctx.db, row.id);
  if (!charge) return row;
  const gateway = gatewayClient(ctx);
  let answer: TransactionAnswer | undefined;
  if (charge.transaction_uid) answer = await gateway.query(charge.transaction_uid);
  else {
    const found = await gateway.queryByTrackingId(chargeTrackingId(row.id, charge.period, charge.attempt));
    answer = found.find((t) => t.type === 'payment');
  }
  if (!answer || !FINAL.has(answer.status)) return row;
  const plan = await findPlanOfShop(ctx, row.plan_id);
  if (!plan) return row;
  const final = answer;
  return ctx.db.tx((tx) => applyChargeAnswer(tx, ctx, row.id, plan, charge, final));
}

/**
 * After the cardholder finished a 3-D Secure step for transaction `uid`: settles the subscription
 * whose charge it was, if any. Called by the gateway's /process page, which has no shop credentials.
 */
export async function settleSubscriptionOfTransaction(services: Services, uid: string): Promise<void> {
  // The uid comes from a URL: anything but a UUID cannot be a charge (and would upset the uuid column).
  if (!UUID.test(uid)) return;
  const row = await subscriptionOfTransaction(services.db, uid);
  if (!row) return;
  const shop = await findShopRow(services.db, row.shop_id);
  if (!shop) return;
  await settleOpenCharge(shopCtx(services, toShop(shop)), row);
}
