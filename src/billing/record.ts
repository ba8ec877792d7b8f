import { lockPendingAttempts, outcomeOf, plannedEventOf } from '../charging/index.js';
import { type Ctx, type Services, shopCtx } from '../context.js';
import type { Statement } from '../db/db.js';
import { mergeRows } from '../db/rows.js';
import type { PlannedPayment } from '../gateway/index.js';
import {
  type Applied,
  changeInstant,
  type Happened,
  rulesFor,
  type SubscriptionRow,
  transition,
  transitionsStatements,
} from '../subscriptions/index.js';
import { customersOf } from './claim.js';
import { LEASE_LOST, LEASE_MS, type Work } from './work.js';

/** A renewal whose payment the in-process gateway has decided but not yet written. */
export interface Planned {
  w: Work;
  ctx: Ctx;
  planned: PlannedPayment;
}

/**
 * Records a batch of planned renewal payments in one transaction and one round trip: each payment is
 * written together with its outcome, and only while its attempt is still open (no other run took it
 * over) and its subscription still billed (one cancelled meanwhile is abandoned, not charged).
 * Resolves with each renewal's outcome, in order.
 */
export async function recordPlanned(services: Services, batch: readonly Planned[]): Promise<string[]> {
  const ids = batch.map((p) => p.w.sub.id);
  const outcomes: string[] = [];
  const written: PlannedPayment[] = [];
  await services.db.tx(async (tx) => {
    outcomes.length = 0;
    // Lock order as everywhere: subscriptions, then their charges.
    const subs = await tx.query<SubscriptionRow>(
      'SELECT * FROM subscriptions WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE',
      [ids],
    );
    const open = await lockPendingAttempts(tx, ids);
    const byId = new Map(subs.map((s) => [s.id, s]));
    const stillOpen = new Set(open.map((c) => `${c.subscription_id}:${c.period}:${c.attempt}`));
    // Each payment's rows, written as one statement per table for the whole batch (mergeRows).
    const payments: Statement[][] = [];
    const items: Applied[] = [];
    written.length = 0;
    for (const { w, ctx, planned } of batch) {
      const sub = byId.get(w.sub.id);
      if (!sub || !stillOpen.has(`${w.sub.id}:${w.period}:${w.attempt}`)) {
        outcomes.push(LEASE_LOST);
        continue;
      }
      const at = changeInstant(sub, ctx.clock.now());
      const rules = rulesFor(ctx.shop);
      let happened: Happened;
      if (sub.cancelled_at) {
        happened = { kind: 'charge_abandoned', period: w.period };
        outcomes.push('canceled');
      } else {
        payments.push(planned.statements);
        written.push(planned);
        happened = plannedEventOf(planned, w.period, new Date(at.getTime() + LEASE_MS));
        outcomes.push(planned.timedOut ? 'unknown' : outcomeOf(planned.answer));
      }
      const uid = sub.cancelled_at ? null : planned.answer.uid;
      items.push({
        sub,
        plan: w.plan,
        t: transition(sub, w.plan, happened, at, rules),
        charge: { period: w.period, attempt: w.attempt, uid },
        at,
      });
    }
    const customers = await customersOf(tx, items);
    const { statements } = transitionsStatements(items, customers);
    await tx.batch([...mergeRows(payments), ...statements]);
  });
  for (const p of written) p.recorded();
  return outcomes;
}

/** The context of a renewal: its shop's, on its shop's clock. */
export function ctxOf(services: Services, w: Work, cache: Map<number, Ctx>): Ctx {
  let ctx = cache.get(w.shop.id);
  if (!ctx) {
    ctx = shopCtx(services, w.shop);
    cache.set(w.shop.id, ctx);
  }
  return ctx;
}
