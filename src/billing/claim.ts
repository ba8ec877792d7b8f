import { type CardRow, findCardRowsByTokens } from '../cards/index.js';
import {
  type ChargeClaim,
  chargeClaimsInsert,
  outcomeOf,
  planCharge,
  plannedEventOf,
  renewalRequest,
} from '../charging/index.js';
import { fixedClock } from '../clock.js';
import type { Services } from '../context.js';
import { type Ctx, shopCtx } from '../context.js';
import type { Db, Statement, Tx } from '../db/db.js';
import { dbWithin } from '../db/held.js';
import { mergeRows } from '../db/rows.js';
import type { PlannedPayment } from '../gateway/index.js';
import { toPlan } from '../plans/index.js';
import { shopsByIds } from '../shops/index.js';
import {
  type Applied,
  changeInstant,
  type Happened,
  quietUntil,
  rulesFor,
  type SubscriptionRow,
  transition,
  transitionsStatements,
  whenDue,
  withChange,
} from '../subscriptions/index.js';
import { customersByIds, lastAttempts, lockDue, openAttempts, plansByIds } from './repository.js';
import { type BillingSummary, LEASE_MS, type Work } from './work.js';

const SET_ASIDE_MS = 24 * 3600_000;

/**
 * Claims one batch: due subscriptions locked and skipped by other runs; each one's open attempt is
 * leased for resolution, a finished finite plan ends, and otherwise the next attempt is claimed and
 * the subscription leased while it runs. The whole batch is written in one round trip. Undefined
 * when nothing was due.
 */
export function claimBatch(
  services: Services,
  now: Date,
  limit: number,
  shopId: number | undefined,
  summary: BillingSummary,
): Promise<Claimed | undefined> {
  return services.db.tx(async (tx) => {
    const due = await lockDue(tx, now, limit, shopId);
    if (due.length === 0) return undefined;
    const ids = due.map((s) => s.id);
    const plans = await plansByIds(tx, [...new Set(due.map((s) => s.plan_id))]);
    const shopById = await shopsByIds(tx, [...new Set(due.map((s) => s.shop_id))]);
    const open = await openAttempts(tx, ids);
    const planById = new Map(plans.map((p) => [p.id, toPlan(p)]));
    const openBySub = new Map(open.map((c) => [c.subscription_id, c]));
    const wanted = due.flatMap((sub) => {
      const plan = planById.get(sub.plan_id);
      if (!plan || openBySub.has(sub.id)) return [];
      const next = whenDue(sub, plan);
      return next.kind === 'charge' ? [{ id: sub.id, period: next.period }] : [];
    });
    const attempts = await lastAttempts(tx, wanted);
    const here = new ChargesHere(services, tx, due);
    await here.readCards();

    const items: Applied[] = [];
    const claims: ChargeClaim[] = [];
    // Each payment's rows, written as one statement per table for the whole batch (mergeRows).
    const payments: Statement[][] = [];
    const pending: (Omit<Work, 'sub'> | undefined)[] = [];
    const charged: {
      index: number;
      w: Omit<Work, 'sub'>;
      ctx: Ctx;
      planned: PlannedPayment;
      outcome: string;
    }[] = [];
    for (const sub of due) {
      const plan = planById.get(sub.plan_id);
      const shop = shopById.get(sub.shop_id);
      // The shop's own time: a test shop's clock runs ahead of real time.
      const at = changeInstant(sub, new Date(now.getTime() + (shop?.clockOffsetMs ?? 0)));
      const lease = new Date(at.getTime() + LEASE_MS);
      let happened: Happened;
      let work: Omit<Work, 'sub'> | undefined;
      const openAttempt = openBySub.get(sub.id);
      const next = plan && whenDue(sub, plan);
      // A charge due inside the shop's quiet hours is charged when they end, on the subscription's
      // clock. Only the moment moves: the period it pays for keeps its anchored end.
      const deferredTo =
        shop && !openAttempt && next?.kind === 'charge' ? quietUntil(shop, at, sub.time_zone) : undefined;
      if (!plan || !shop || !next) {
        // Nothing can be charged without its plan: set aside for an operator, never retried in a loop.
        services.log.error({ subscription: sub.id }, 'a due subscription has no plan or shop; not billed');
        happened = { kind: 'lease', until: new Date(at.getTime() + SET_ASIDE_MS) };
      } else if (openAttempt) {
        happened = { kind: 'lease', until: lease };
        work = { kind: 'resolve', plan, shop, period: openAttempt.period, attempt: openAttempt.attempt };
      } else if (next.kind === 'end') {
        happened = { kind: 'cycles_completed' };
        summary.ended++;
      } else if (deferredTo) {
        happened = { kind: 'lease', until: deferredTo };
      } else {
        const attempt = (attempts.get(sub.id) ?? 0) + 1;
        const claim = {
          shopId: sub.shop_id,
          subscriptionId: sub.id,
          period: next.period,
          attempt,
          amount: plan.plan.amount,
          currency: plan.currency,
          at,
        };
        work = { kind: 'charge', plan, shop, period: next.period, attempt };
        const rules = rulesFor(shop);
        const claimed = transition(
          sub,
          plan,
          { kind: 'renewal_claimed', period: next.period, lease },
          at,
          rules,
        );
        const direct = await here.plan({ ...work, sub }, at);
        if (direct) {
          // Charged here and now: the claim, the payment and the outcome commit together.
          const mid = withChange(sub, claimed.change, sub.created_at, at);
          const answer = direct.planned.answer;
          const answered = transition(
            mid,
            plan,
            plannedEventOf(direct.planned, next.period, lease),
            at,
            rules,
          );
          claims.push({ ...claim, status: answered.chargeStatus ?? 'pending', uid: answer.uid });
          payments.push(direct.planned.statements);
          const t = {
            change: { ...claimed.change, ...answered.change },
            chargeStatus: null,
            events: [...claimed.events, ...answered.events],
          };
          charged.push({
            index: items.length,
            w: work,
            ctx: direct.ctx,
            planned: direct.planned,
            outcome: direct.planned.timedOut ? 'unknown' : outcomeOf(answer),
          });
          items.push({ sub, plan, t, at });
          pending.push(undefined);
          continue;
        }
        claims.push(claim);
        happened = { kind: 'renewal_claimed', period: next.period, lease };
      }
      const rules = rulesFor(shop ?? { retrySchedule: null, quietHours: null });
      items.push({ sub, plan, t: transition(sub, plan, happened, at, rules), at });
      pending.push(work);
    }
    const customers = await customersOf(tx, items);
    const { statements, rows } = transitionsStatements(items, customers);
    if (claims.length > 0) statements.unshift(chargeClaimsInsert(claims, now));
    await tx.batch([...mergeRows(payments), ...statements]);
    return {
      work: rows.flatMap((sub, i) => {
        const w = pending[i];
        return w ? [{ ...w, sub }] : [];
      }),
      charged: charged.map((c) => ({
        w: { ...c.w, sub: rows[c.index] as SubscriptionRow },
        ctx: c.ctx,
        planned: c.planned,
        outcome: c.outcome,
      })),
    };
  });
}

/** What a claim did: work left for later steps, and renewals it charged itself. */
export interface Claimed {
  work: Work[];
  charged: { w: Work; ctx: Ctx; planned: PlannedPayment; outcome: string }[];
}

/**
 * Renewals charged inside the claim's own transaction: with the gateway in this process nothing
 * leaves it, so the payment, its attempt and its outcome can commit together with the claim, and no
 * lease is needed. Planned against the transaction (the subscriptions are locked) with the batch's
 * cards read at once. Over HTTP, or for a payment that cannot be planned, nothing is charged here.
 */
class ChargesHere {
  readonly #db: Db;
  readonly #contexts = new Map<number, Ctx>();
  #cards: Map<string, CardRow> = new Map();

  constructor(
    private readonly services: Services,
    tx: Tx,
    private readonly due: readonly SubscriptionRow[],
  ) {
    this.#db = dbWithin(tx, services.db.kind);
  }

  async readCards(): Promise<void> {
    if (this.services.config.gatewayRemote) return;
    const tokens = [...new Set(this.due.flatMap((s) => (s.card_token ? [s.card_token] : [])))];
    if (tokens.length === 0) return;
    this.#cards = new Map((await findCardRowsByTokens(this.#db, tokens)).map((c) => [c.token, c]));
  }

  /** `at`: the shop's instant of the claim, at which the payment is decided too (clock.ts: fixedClock). */
  async plan(w: Work, at: Date): Promise<{ ctx: Ctx; planned: PlannedPayment } | undefined> {
    if (this.services.config.gatewayRemote) return undefined;
    let ctx = this.#contexts.get(w.shop.id);
    if (!ctx || ctx.clock.now().getTime() !== at.getTime()) {
      ctx = { ...shopCtx(this.services, w.shop), db: this.#db, clock: fixedClock(at) };
      this.#contexts.set(w.shop.id, ctx);
    }
    const planned = await planCharge(ctx, renewalRequest(w.sub, w.plan, w.period, w.attempt), this.#cards);
    return planned && { ctx, planned };
  }
}

/** The customers of the subscriptions whose events need them (their payloads show the customer). */
export async function customersOf(tx: Tx, items: readonly Applied[]) {
  const ids = items.flatMap((i) => (i.t.events.length > 0 && i.sub.customer_id ? [i.sub.customer_id] : []));
  return new Map((await customersByIds(tx, [...new Set(ids)])).map((c) => [c.id, c]));
}
