import { type Ctx, type Services, shopCtx } from '../context.js';
import { ApiError } from '../core/errors.js';
import {
  type ChargeRequest,
  GatewayTimeout,
  gatewayClient,
  type TransactionAnswer,
} from '../gateway/client.js';
import { type Plan, toPlan } from '../plans/service.js';
import { type Shop, toShop } from '../shops/repository.js';
import { chargeDescription } from '../subscriptions/charge.js';
import { chargeClaimInsert, lockOpenCharge } from '../subscriptions/charge-records.js';
import { lockSubscription, type SubscriptionRow } from '../subscriptions/repository.js';
import { rulesFor } from '../subscriptions/rules.js';
import { CHARGE_LEASE_MS } from '../subscriptions/schedule.js';
import { applyChargeAnswer, chargeTrackingId, outcomeOf } from '../subscriptions/settle.js';
import { type Happened, transition, whenDue } from '../subscriptions/transitions.js';
import { summarize } from '../subscriptions/view.js';
import { applyTransition } from '../subscriptions/writer.js';
import { lastAttempts, lockDue, openAttempts, plansByIds, shopsByIds } from './repository.js';

/**
 * The billing engine: takes what is due, charges it once, and records the outcome through the
 * subscription's one writer. Each attempt is claimed (committed) before the gateway is asked, under a
 * key unique to (subscription, period, attempt) that is also its tracking id; so a crash or a timeout
 * leaves an attempt that is resolved by asking the gateway, never by charging again blindly.
 */

/** How long a claimed attempt keeps others off before it is looked at again (resolved by query). */
export const LEASE_MS = CHARGE_LEASE_MS;

/** The outcome of an attempt another run took over before this one sent it: not charged here. */
const LEASE_LOST = 'lease_lost';

export interface BillingSummary {
  charged: number;
  successful: number;
  failed: number;
  errors: number;
  unknown: number;
  /** Subscriptions that ended because their plan's billing cycles were all paid. */
  ended: number;
  /** Open attempts whose outcome a query settled (or proved they never reached the gateway). */
  resolved: number;
}

export interface BillingObserver {
  attempt?(outcome: string, seconds: number): void;
}

export interface BillOptions {
  /** Bill only this shop (a test clock's advance). */
  shopId?: number;
  batchSize?: number;
  observer?: BillingObserver;
}

type Work =
  | { kind: 'charge'; sub: SubscriptionRow; plan: Plan; shop: Shop; period: number; attempt: number }
  | { kind: 'resolve'; sub: SubscriptionRow; plan: Plan; shop: Shop; period: number; attempt: number };

export const emptySummary = (): BillingSummary => ({
  charged: 0,
  successful: 0,
  failed: 0,
  errors: 0,
  unknown: 0,
  ended: 0,
  resolved: 0,
});

/** Runs everything due now, batch after batch, until nothing is due. */
export async function billDue(services: Services, opts: BillOptions = {}): Promise<BillingSummary> {
  const summary = emptySummary();
  const batchSize = opts.batchSize ?? 100;
  for (;;) {
    const work = await claimBatch(services, services.clock.now(), batchSize, opts.shopId, summary);
    if (work === undefined) break;
    for (const w of work) await perform(services, w, summary, opts.observer);
  }
  return summary;
}

/**
 * Claims one batch: due subscriptions locked and skipped by other runs; each one's open attempt is
 * leased for resolution, a finished finite plan ends, and otherwise the next attempt is claimed.
 * Undefined when nothing was due.
 */
async function claimBatch(
  services: Services,
  now: Date,
  limit: number,
  shopId: number | undefined,
  summary: BillingSummary,
): Promise<Work[] | undefined> {
  return services.db.tx(async (tx) => {
    const due = await lockDue(tx, now, limit, shopId);
    if (due.length === 0) return undefined;
    const ids = due.map((s) => s.id);
    const [plans, shops, open] = await Promise.all([
      plansByIds(tx, [...new Set(due.map((s) => s.plan_id))]),
      shopsByIds(tx, [...new Set(due.map((s) => s.shop_id))]),
      openAttempts(tx, ids),
    ]);
    const planById = new Map(plans.map((p) => [p.id, toPlan(p)]));
    const shopById = new Map(shops.map((s) => [s.id, toShop(s)]));
    const openBySub = new Map(open.map((c) => [c.subscription_id, c]));
    const charges = due.flatMap((sub) => {
      const plan = planById.get(sub.plan_id);
      if (!plan || openBySub.has(sub.id)) return [];
      const next = whenDue(sub, plan);
      return next.kind === 'charge' ? [{ id: sub.id, period: next.period }] : [];
    });
    const attempts = await lastAttempts(tx, charges);
    const work: Work[] = [];
    for (const sub of due) {
      const plan = planById.get(sub.plan_id);
      const shop = shopById.get(sub.shop_id);
      // The shop's own time: a test shop's clock runs ahead of real time.
      const at = new Date(now.getTime() + (shop?.clockOffsetMs ?? 0));
      const lease = new Date(at.getTime() + LEASE_MS);
      if (!plan || !shop) {
        // Nothing can be charged without its plan: set aside for an operator, never retried in a loop.
        services.log.error({ subscription: sub.id }, 'a due subscription has no plan or shop; not billed');
        await apply(
          tx,
          sub,
          plan,
          shop,
          { kind: 'lease', until: new Date(at.getTime() + 24 * 3600_000) },
          at,
        );
        continue;
      }
      const pending = openBySub.get(sub.id);
      if (pending) {
        await apply(tx, sub, plan, shop, { kind: 'lease', until: lease }, at);
        work.push({ kind: 'resolve', sub, plan, shop, period: pending.period, attempt: pending.attempt });
        continue;
      }
      const next = whenDue(sub, plan);
      if (next.kind === 'end') {
        await apply(tx, sub, plan, shop, { kind: 'cycles_completed' }, at);
        summary.ended++;
        continue;
      }
      const attempt = (attempts.get(sub.id) ?? 0) + 1;
      const claim = chargeClaimInsert(
        {
          subscriptionId: sub.id,
          period: next.period,
          attempt,
          amount: plan.plan.amount,
          currency: plan.currency,
        },
        at,
      );
      await tx.query(claim.sql, claim.params);
      const claimed = await apply(
        tx,
        sub,
        plan,
        shop,
        { kind: 'renewal_claimed', period: next.period, lease },
        at,
      );
      work.push({ kind: 'charge', sub: claimed, plan, shop, period: next.period, attempt });
    }
    return work;
  });
}

function apply(
  tx: Parameters<typeof applyTransition>[0],
  sub: SubscriptionRow,
  plan: Plan | undefined,
  shop: Shop | undefined,
  happened: Happened,
  now: Date,
): Promise<SubscriptionRow> {
  const rules = rulesFor(shop ?? { timeZone: 'UTC', retrySchedule: null, quietHours: null });
  return applyTransition(tx, sub, plan, transition(sub, plan, happened, now, rules), now);
}

/** The gateway payment of a renewal attempt: the stored card, no cardholder present. */
export function renewalRequest(
  sub: SubscriptionRow,
  plan: Plan,
  period: number,
  attempt: number,
): ChargeRequest {
  return {
    amount: plan.plan.amount,
    currency: plan.currency,
    description: chargeDescription(plan.title, sub.id),
    tracking_id: chargeTrackingId(sub.id, period, attempt),
    language: sub.language,
    test: plan.test,
    // The attempt's key already makes a repeat impossible.
    duplicate_check: false,
    // A merchant-initiated charge of a stored card: nobody is there to pass 3-D Secure.
    credit_card: { token: sub.card_token as string, skip_three_d_secure_verification: true },
    additional_data: { subscription_id: sub.id, billing_period: period, attempt },
  };
}

async function perform(services: Services, w: Work, summary: BillingSummary, observer?: BillingObserver) {
  const ctx = shopCtx(services, w.shop);
  const started = process.hrtime.bigint();
  let outcome: string;
  try {
    outcome = w.kind === 'resolve' ? await resolve(ctx, w, summary) : await charge(ctx, w);
  } catch (err) {
    // The attempt stays open under its lease: the next run resolves it by query.
    ctx.log.error(
      { err, subscription: w.sub.id, period: w.period, attempt: w.attempt },
      'renewal attempt failed',
    );
    outcome = 'unknown';
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // An attempt whose lease was lost was never sent: whoever took it over counts its charge.
  if (w.kind === 'charge' && outcome !== LEASE_LOST) {
    summary.charged++;
    if (outcome === 'successful') summary.successful++;
    else if (outcome === 'failed') summary.failed++;
    else if (outcome === 'error' || outcome === 'refused') summary.errors++;
    else summary.unknown++;
  }
  observer?.attempt?.(outcome, seconds);
  // Ids and outcome only: a log line never carries card data.
  ctx.log.info(
    {
      subscription: w.sub.id,
      period: w.period,
      attempt: w.attempt,
      outcome,
      duration_ms: Math.round(seconds * 1000),
    },
    w.kind === 'resolve' ? 'renewal attempt resolved' : 'renewal attempt',
  );
}

/** Charges a claimed attempt and records the answer; the outcome, for the log and the summary. */
async function charge(ctx: Ctx, w: Work): Promise<string> {
  const gateway = gatewayClient(ctx);
  const request = renewalRequest(w.sub, w.plan, w.period, w.attempt);
  const ref = { period: w.period, attempt: w.attempt };
  if (gateway.planPayment) {
    const planned = await gateway.planPayment(request).catch((err: unknown) => {
      if (err instanceof ApiError) return undefined;
      throw err;
    });
    if (planned) {
      // The payment and its outcome commit together, and only if the subscription is still billed.
      const recorded = await ctx.db.tx(async (tx) => {
        const sub = await lockSubscription(tx, ctx.shop.id, w.sub.id);
        if (!sub || !(await lockOpenCharge(tx, w.sub.id, w.period, w.attempt))) return false;
        if (sub.cancelled_at) {
          const now = ctx.clock.now();
          const t = transition(
            sub,
            w.plan,
            { kind: 'charge_abandoned', period: w.period },
            now,
            rulesFor(ctx.shop),
          );
          await applyTransition(tx, sub, w.plan, t, now, { period: w.period, attempt: w.attempt, uid: null });
          return false;
        }
        await tx.query(planned.statement.sql, planned.statement.params);
        if (planned.timedOut) return true;
        await applyChargeAnswer(tx, ctx, w.sub.id, w.plan, ref, planned.answer);
        return true;
      });
      if (!recorded) return 'canceled';
      planned.recorded();
      if (planned.timedOut) return settleUnknown(ctx, w, planned.answer);
      return outcomeOf(planned.answer);
    }
  }
  // Step by step: asked over HTTP, or for a card whose outcome depends on its history.
  const held = await holdForRequest(ctx, w);
  if (held !== 'held') return held;
  let answer: TransactionAnswer;
  try {
    answer = await gateway.payment(request);
  } catch (err) {
    if (err instanceof GatewayTimeout) {
      const pending = err.uid ? await gateway.query(err.uid).catch(() => undefined) : undefined;
      return settleUnknown(ctx, w, pending);
    }
    if (err instanceof ApiError) {
      await settle(ctx, w, {
        kind: 'charge_answered',
        period: w.period,
        outcome: 'refused',
        last: null,
        message: err.message,
      });
      return 'refused';
    }
    throw err;
  }
  await ctx.db.tx((tx) => applyChargeAnswer(tx, ctx, w.sub.id, w.plan, ref, answer));
  return outcomeOf(answer);
}

/**
 * Before a payment goes out step by step, makes sure the attempt is still this run's and keeps it so
 * for a whole lease. A batch's lease starts when the batch is claimed and its charges run one after
 * another, so a slow batch (a gateway taking seconds per answer) can outlive it: another run then
 * resolves the attempts not yet sent by a query that finds nothing, abandons them and charges their
 * periods again, and this run must not send them after all. The attempt must still be open and the
 * subscription still under the lease this run set (another run's claim replaces it); then the lease
 * starts afresh, and the request has a whole lease before anyone may ask what became of it. (A
 * planned payment needs none of this: it commits only while its attempt is open.) An attempt whose
 * subscription was cancelled meanwhile is abandoned without a charge.
 */
async function holdForRequest(ctx: Ctx, w: Work): Promise<'held' | 'canceled' | typeof LEASE_LOST> {
  return ctx.db.tx(async (tx) => {
    const sub = await lockSubscription(tx, ctx.shop.id, w.sub.id);
    if (!sub || !(await lockOpenCharge(tx, w.sub.id, w.period, w.attempt))) return LEASE_LOST;
    const now = ctx.clock.now();
    if (sub.cancelled_at) {
      const t = transition(
        sub,
        w.plan,
        { kind: 'charge_abandoned', period: w.period },
        now,
        rulesFor(ctx.shop),
      );
      await applyTransition(tx, sub, w.plan, t, now, { period: w.period, attempt: w.attempt, uid: null });
      return 'canceled';
    }
    if (sub.renew_at?.getTime() !== w.sub.renew_at?.getTime()) return LEASE_LOST;
    await apply(tx, sub, w.plan, ctx.shop, { kind: 'lease', until: new Date(now.getTime() + LEASE_MS) }, now);
    return 'held';
  });
}

/** No answer in time: the attempt waits, marked unknown, until a query under a later lease settles it. */
async function settleUnknown(ctx: Ctx, w: Work, pending: TransactionAnswer | undefined): Promise<string> {
  await settle(
    ctx,
    w,
    {
      kind: 'charge_unknown',
      period: w.period,
      last: pending ? summarize(pending) : null,
      recheckAt: new Date(ctx.clock.now().getTime() + LEASE_MS),
    },
    pending?.uid ?? null,
  );
  return 'unknown';
}

async function settle(ctx: Ctx, w: Work, happened: Happened, uid: string | null = null): Promise<void> {
  await ctx.db.tx(async (tx) => {
    const sub = await lockSubscription(tx, ctx.shop.id, w.sub.id);
    if (!sub || !(await lockOpenCharge(tx, w.sub.id, w.period, w.attempt))) return;
    const now = ctx.clock.now();
    const t = transition(sub, w.plan, happened, now, rulesFor(ctx.shop));
    await applyTransition(tx, sub, w.plan, t, now, { period: w.period, attempt: w.attempt, uid });
  });
}

/**
 * An open attempt whose lease ran out: asks the gateway what became of it by its tracking id. A final
 * answer is recorded as if it had come at once; a pending one waits another lease; none at all means
 * the attempt never reached the gateway (the claim is committed before the gateway is asked, and a
 * lease outlasts any request), so it is abandoned and the period is tried again under a new attempt.
 */
async function resolve(ctx: Ctx, w: Work, summary: BillingSummary): Promise<string> {
  const gateway = gatewayClient(ctx);
  const found = await gateway.queryByTrackingId(chargeTrackingId(w.sub.id, w.period, w.attempt));
  const answer = found.find((t) => t.type === 'payment');
  const ref = { period: w.period, attempt: w.attempt };
  if (answer && answer.status !== 'pending') {
    await ctx.db.tx((tx) => applyChargeAnswer(tx, ctx, w.sub.id, w.plan, ref, answer));
    summary.resolved++;
    return outcomeOf(answer);
  }
  if (answer) return 'unknown';
  await settle(ctx, w, { kind: 'charge_abandoned', period: w.period });
  summary.resolved++;
  return 'abandoned';
}
