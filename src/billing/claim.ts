import type { Services } from '../context.js';
import type { Tx } from '../db/db.js';
import { toPlan } from '../plans/service.js';
import { toShop } from '../shops/repository.js';
import { type ChargeClaim, chargeClaimsInsert } from '../subscriptions/charge-records.js';
import { rulesFor } from '../subscriptions/rules.js';
import { type Happened, transition, whenDue } from '../subscriptions/transitions.js';
import { type Applied, transitionsStatements } from '../subscriptions/writer.js';
import { customersByIds, lastAttempts, lockDue, openAttempts, plansByIds, shopsByIds } from './repository.js';
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
): Promise<Work[] | undefined> {
  return services.db.tx(async (tx) => {
    const due = await lockDue(tx, now, limit, shopId);
    if (due.length === 0) return undefined;
    const ids = due.map((s) => s.id);
    const plans = await plansByIds(tx, [...new Set(due.map((s) => s.plan_id))]);
    const shops = await shopsByIds(tx, [...new Set(due.map((s) => s.shop_id))]);
    const open = await openAttempts(tx, ids);
    const planById = new Map(plans.map((p) => [p.id, toPlan(p)]));
    const shopById = new Map(shops.map((s) => [s.id, toShop(s)]));
    const openBySub = new Map(open.map((c) => [c.subscription_id, c]));
    const wanted = due.flatMap((sub) => {
      const plan = planById.get(sub.plan_id);
      if (!plan || openBySub.has(sub.id)) return [];
      const next = whenDue(sub, plan);
      return next.kind === 'charge' ? [{ id: sub.id, period: next.period }] : [];
    });
    const attempts = await lastAttempts(tx, wanted);

    const items: Applied[] = [];
    const claims: ChargeClaim[] = [];
    const pending: Omit<Work, 'sub'>[] = [];
    for (const sub of due) {
      const plan = planById.get(sub.plan_id);
      const shop = shopById.get(sub.shop_id);
      // The shop's own time: a test shop's clock runs ahead of real time.
      const at = new Date(now.getTime() + (shop?.clockOffsetMs ?? 0));
      const lease = new Date(at.getTime() + LEASE_MS);
      let happened: Happened;
      let work: Omit<Work, 'sub'> | undefined;
      const openAttempt = openBySub.get(sub.id);
      const next = plan && whenDue(sub, plan);
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
      } else {
        const attempt = (attempts.get(sub.id) ?? 0) + 1;
        happened = { kind: 'renewal_claimed', period: next.period, lease };
        claims.push({
          subscriptionId: sub.id,
          period: next.period,
          attempt,
          amount: plan.plan.amount,
          currency: plan.currency,
          at,
        });
        work = { kind: 'charge', plan, shop, period: next.period, attempt };
      }
      const rules = rulesFor(shop ?? { timeZone: 'UTC', retrySchedule: null, quietHours: null });
      items.push({ sub, plan, t: transition(sub, plan, happened, at, rules), at });
      pending.push(work as Omit<Work, 'sub'>);
    }
    const customers = await customersOf(tx, items);
    const { statements, rows } = transitionsStatements(items, customers);
    if (claims.length > 0) statements.unshift(chargeClaimsInsert(claims, now));
    await tx.batch(statements);
    return rows.flatMap((sub, i) => {
      const w = pending[i];
      return w ? [{ ...w, sub }] : [];
    });
  });
}

/** The customers of the subscriptions whose events need them (their payloads show the customer). */
export async function customersOf(tx: Tx, items: readonly Applied[]) {
  const ids = items.flatMap((i) => (i.t.events.length > 0 && i.sub.customer_id ? [i.sub.customer_id] : []));
  return new Map((await customersByIds(tx, [...new Set(ids)])).map((c) => [c.id, c]));
}
