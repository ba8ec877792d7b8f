import type { CardRow } from '../cards/index.js';
import {
  endAttempt,
  lockOpenCharge,
  outcomeOf,
  planCharge,
  recordPlannedAttempt,
  refundAttempt,
  renewalRequest,
  resolveAttempt,
  reversalsDue,
  takeAttempt,
  touchOpenAttempt,
} from '../charging/index.js';
import { type Ctx, type Services, type Shop, shopCtx } from '../context.js';
import type { Tx } from '../db/db.js';
import { shopById } from '../shops/index.js';
import {
  applyTransition,
  changeInstant,
  rulesFor,
  type SubscriptionRow,
  subscriptionSubject,
  transition,
} from '../subscriptions/index.js';
import { claimBatch } from './claim.js';
import { ctxOf, type Planned, recordPlanned } from './record.js';
import { cancelledOpenAttempts } from './repository.js';
import {
  type BillingObserver,
  type BillingSummary,
  countCharge,
  emptySummary,
  LEASE_LOST,
  LEASE_MS,
  type Work,
} from './work.js';

/**
 * The billing engine: takes what is due, charges it once, and records the outcome through the
 * subscription's one writer. Each attempt is claimed (committed) before the gateway is asked, under a
 * key unique to (subscription, period, attempt) that is also its tracking id; so a crash or a timeout
 * leaves an attempt that is resolved by asking the gateway, never by charging again blindly.
 */

export type { BillingObserver, BillingSummary } from './work.js';
export { emptySummary, LEASE_MS } from './work.js';

export interface BillOptions {
  /** Bill only this shop (a test clock's advance). */
  shopId?: number;
  batchSize?: number;
  observer?: BillingObserver;
}

/** Runs everything due now, batch after batch, until nothing is due. */
export async function billDue(services: Services, opts: BillOptions = {}): Promise<BillingSummary> {
  const summary = emptySummary();
  const batchSize = opts.batchSize ?? 100;
  for (;;) {
    const started = process.hrtime.bigint();
    const claimed = await claimBatch(services, services.clock.now(), batchSize, opts.shopId, summary);
    if (claimed === undefined) break;
    if (claimed.charged.length > 0) {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9 / claimed.charged.length;
      for (const { w, ctx, planned, outcome } of claimed.charged) {
        planned.recorded();
        countCharge(summary, outcome);
        opts.observer?.attempt?.(outcome, seconds);
        logAttempt(ctx, w, outcome, seconds);
      }
    }
    await performBatch(services, claimed.work, summary, opts.observer);
  }
  await resolveCancelled(services, summary, opts);
  await refundDue(services, opts);
  return summary;
}

/**
 * Payments taken after their subscription was cancelled whose refund could not be made when they
 * were recorded (a crash, a gateway down): refunded now (charging: refundAttempt asks the gateway
 * first, so a refund made by a run that died before recording it is not made again).
 */
async function refundDue(services: Services, opts: BillOptions): Promise<void> {
  const due = await reversalsDue(services.db, 100, opts.shopId);
  const shops = new Map<number, Shop | undefined>();
  for (const charge of due) {
    if (!shops.has(charge.shop_id)) shops.set(charge.shop_id, await shopById(services.db, charge.shop_id));
    const shop = shops.get(charge.shop_id);
    if (shop) await refundAttempt(shopCtx(services, shop), charge);
  }
}

/**
 * Open attempts of cancelled subscriptions, once their lease is over (a process died before
 * recording the answer, or the gateway had not answered yet when the shop cancelled): asked about
 * like any open attempt, so the money that moved is recorded and an attempt that never reached the
 * gateway is abandoned. Nothing is ever charged here.
 */
async function resolveCancelled(
  services: Services,
  summary: BillingSummary,
  opts: BillOptions,
): Promise<void> {
  const attempts = await cancelledOpenAttempts(services.db, services.clock.now(), LEASE_MS, 100, opts.shopId);
  if (attempts.length === 0) return;
  const shops = new Map<number, Shop | undefined>();
  for (const id of new Set(attempts.map((a) => a.shop_id))) shops.set(id, await shopById(services.db, id));
  for (const a of attempts) {
    const shop = shops.get(a.shop_id);
    if (!shop) continue;
    const ctx = shopCtx(services, shop);
    try {
      if (a.status === 'incomplete') {
        // A 3-D Secure step its cancel could not end at the gateway: ended now, then resolved.
        if (await endAttempt(ctx, subscriptionSubject(ctx, a.subscription_id), a)) {
          summary.resolved++;
          continue;
        }
      } else {
        const resolved = await resolveAttempt(ctx, subscriptionSubject(ctx, a.subscription_id), a, {
          settles: (status) => status !== 'pending',
          abandonWhenMissing: true,
        });
        if (resolved.kind !== 'open') {
          summary.resolved++;
          continue;
        }
      }
    } catch (err) {
      ctx.log.error(
        { err, subscription: a.subscription_id },
        'could not resolve an open attempt of a cancelled subscription',
      );
    }
    // Still waiting at the gateway, or the gateway could not be asked: asked again a lease later
    // (a test clock's advance, which stops where such a lease ends, must not find it due again).
    await touchOpenAttempt(services.db, a, ctx.clock.now()).catch((err: unknown) => {
      ctx.log.error({ err, subscription: a.subscription_id }, 'could not postpone an open attempt');
    });
  }
}

/** The stored cards of a batch's charges, read in one query. */
async function cardsOf(services: Services, work: readonly Work[]): Promise<Map<string, CardRow>> {
  const tokens = [
    ...new Set(work.flatMap((w) => (w.kind === 'charge' && w.sub.card_token ? [w.sub.card_token] : []))),
  ];
  if (tokens.length === 0) return new Map();
  const rows = await services.db.query<CardRow>('SELECT * FROM cards WHERE token = ANY($1::text[])', [
    tokens,
  ]);
  return new Map(rows.map((r) => [r.token, r]));
}

/**
 * Charges a claimed batch. With the gateway in this process, the payments are decided first and then
 * written with their outcomes in one transaction; a payment it cannot plan (over HTTP, or a card whose
 * outcome depends on its history) goes step by step, as does every open attempt to resolve.
 */
async function performBatch(
  services: Services,
  work: readonly Work[],
  summary: BillingSummary,
  observer: BillingObserver | undefined,
): Promise<void> {
  const contexts = new Map<number, Ctx>();
  const planned: Planned[] = [];
  const oneByOne: Work[] = [];
  const started = process.hrtime.bigint();
  const cards = await cardsOf(services, work);
  for (const w of work) {
    const ctx = ctxOf(services, w, contexts);
    const p =
      w.kind === 'charge'
        ? await planCharge(ctx, renewalRequest(w.sub, w.plan, w.period, w.attempt), cards)
        : undefined;
    if (p) planned.push({ w, ctx, planned: p });
    else oneByOne.push(w);
  }
  if (planned.length > 0) {
    let outcomes: string[] | undefined;
    try {
      outcomes = await recordPlanned(services, planned);
    } catch (err) {
      // One bad payment must not hold back the batch: each is then taken on its own.
      services.log.error({ err }, 'recording a batch of renewals failed; charging them one by one');
      oneByOne.push(...planned.map((p) => p.w));
    }
    if (outcomes) {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9 / planned.length;
      outcomes.forEach((outcome, i) => {
        const w = (planned[i] as Planned).w;
        countCharge(summary, outcome);
        observer?.attempt?.(outcome, seconds);
        logAttempt(ctxOf(services, w, contexts), w, outcome, seconds);
      });
    }
  }
  for (const w of oneByOne) await perform(services, w, summary, observer);
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
  if (w.kind === 'charge') countCharge(summary, outcome);
  observer?.attempt?.(outcome, seconds);
  logAttempt(ctx, w, outcome, seconds);
}

/** One line per attempt: ids and outcome only, never card data. */
function logAttempt(ctx: Ctx, w: Work, outcome: string, seconds: number): void {
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

/** Charges a claimed attempt and records the answer (charging); the outcome, for the log and the summary. */
async function charge(ctx: Ctx, w: Work): Promise<string> {
  const request = renewalRequest(w.sub, w.plan, w.period, w.attempt);
  const subject = subscriptionSubject(ctx, w.sub.id, w.plan);
  const ref = { period: w.period, attempt: w.attempt };
  const lease = () => new Date(ctx.clock.now().getTime() + LEASE_MS);
  const planned = await planCharge(ctx, request);
  if (planned) {
    // The payment and its outcome commit together, and only if the subscription is still billed.
    const recorded = await recordPlannedAttempt(ctx, subject, ref, planned, lease());
    if (recorded !== 'recorded') return 'canceled';
    planned.recorded();
    return planned.timedOut ? 'unknown' : outcomeOf(planned.answer);
  }
  // Step by step: asked over HTTP, or for a card whose outcome depends on its history.
  const held = await holdForRequest(ctx, w);
  if (held !== 'held') return held;
  return (await takeAttempt(ctx, subject, ref, request, lease)).outcome;
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
  const subject = subscriptionSubject(ctx, w.sub.id, w.plan);
  return ctx.db.tx(async (tx) => {
    const sub = await subject.lock(tx);
    if (!sub || !(await lockOpenCharge(tx, w.sub.id, w.period, w.attempt))) return LEASE_LOST;
    const attempt = { period: w.period, attempt: w.attempt, uid: null };
    if (!subject.charged(sub)) {
      await subject.apply(tx, sub, { kind: 'charge_abandoned', period: w.period }, attempt);
      return 'canceled';
    }
    if (sub.renew_at?.getTime() !== w.sub.renew_at?.getTime()) return LEASE_LOST;
    await applyLease(tx, ctx, w, sub, new Date(ctx.clock.now().getTime() + LEASE_MS));
    return 'held';
  });
}

/** Keeps others off the locked subscription until `until` (its lease), by the shop's rules. */
async function applyLease(tx: Tx, ctx: Ctx, w: Work, sub: SubscriptionRow, until: Date): Promise<void> {
  const now = changeInstant(sub, ctx.clock.now());
  const t = transition(sub, w.plan, { kind: 'lease', until }, now, rulesFor(ctx.shop));
  await applyTransition(tx, sub, w.plan, t, now);
}

/**
 * An open attempt whose lease ran out: asks the gateway what became of it by its tracking id. A final
 * answer is recorded as if it had come at once; a pending one waits another lease; none at all means
 * the attempt never reached the gateway (the claim is committed before the gateway is asked, and a
 * lease outlasts any request), so it is abandoned and the period is tried again under a new attempt.
 */
async function resolve(ctx: Ctx, w: Work, summary: BillingSummary): Promise<string> {
  const resolved = await resolveAttempt(
    ctx,
    subscriptionSubject(ctx, w.sub.id, w.plan),
    { period: w.period, attempt: w.attempt, transaction_uid: null },
    { settles: (status) => status !== 'pending', abandonWhenMissing: true },
  );
  if (resolved.kind === 'open') return 'unknown';
  summary.resolved++;
  return resolved.kind === 'settled' ? resolved.outcome : 'abandoned';
}
