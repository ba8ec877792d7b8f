/**
 * A test shop's clock (decisions.md, Test clock): real time plus an offset that only grows. Advancing
 * it runs, in order, everything of the shop that falls due on the way, so a year of monthly billing
 * is tested in one call. The same verbs serve `GET/POST /test_clock` and `kopek clock`.
 */
import { nextExpiryOfShop, sweepExpiredCheckouts } from '../checkout/index.js';
import type { KeyedRequest, Services, Shop } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { Queryable } from '../db/db.js';
import { moveShopClock, shopById } from '../shops/index.js';
import { type BillingSummary, billDue, emptySummary, LEASE_MS } from './renew.js';
import { nextCancelledAttemptOfShop, nextDueOfShop } from './repository.js';
import { advanceTarget } from './test-clock-input.js';

export interface TestClockView {
  /** The shop's current time, ISO 8601 UTC. */
  now: string;
  /** How far the shop's clock runs ahead of real time; milliseconds as a fraction. */
  offset_seconds: number;
  /** The shop's time zone, in which `by` durations are added. */
  time_zone: string;
}

export interface AdvanceSummary {
  test_clock: TestClockView;
  /** The shop's time before the advance. */
  advanced_from: string;
  /** What ran on the way: billing runs and the sum of their outcomes. */
  billing: BillingSummary & { runs: number };
  /** Checkout tokens that expired unpaid on the way, each announced at its expiry. */
  expired_checkouts: number;
}

/** An advance that needs more billing runs than this is a plan with a tiny interval over years. */
export const MAX_RUNS = 100_000;
/** A run that found nothing to do while something is due: another run holds it; wait for that. */
const BUSY_WAIT_MS = 20;
const MAX_BUSY_WAITS = 500;

export const TestClockMsg = {
  liveShop: 'Record not found: only test shops have a test clock',
  tooManyRuns: (n: number, at: string) =>
    `Stopped after ${n} billing runs, at ${at}; advance in smaller steps to go further`,
  busy: "Another billing run holds this shop's subscriptions; try again",
} as const;

/** The shop, when it is a test shop; the contract's 404 otherwise (live or unknown). */
async function testShop(db: Queryable, shopId: number): Promise<Shop> {
  const shop = await shopById(db, shopId);
  if (!shop?.test) throw ApiError.notFound(TestClockMsg.liveShop);
  return shop;
}

function view(services: Services, offsetMs: number, timeZone: string): TestClockView {
  return {
    now: new Date(services.clock.now().getTime() + offsetMs).toISOString(),
    offset_seconds: offsetMs / 1000,
    time_zone: timeZone,
  };
}

export async function readTestClock(services: Services, shopId: number): Promise<TestClockView> {
  const shop = await testShop(services.db, shopId);
  return view(services, shop.clockOffsetMs, shop.timeZone);
}

function add(total: BillingSummary, run: BillingSummary): void {
  for (const key of Object.keys(run) as (keyof BillingSummary)[]) total[key] += run[key];
}

const idle = (s: BillingSummary) => Object.values(s).every((n) => n === 0);

const earliest = (...dates: (Date | undefined)[]) => {
  const times = dates.flatMap((d) => (d ? [d.getTime()] : []));
  return times.length === 0 ? undefined : Math.min(...times);
};

/**
 * Moves the shop's clock to the target of `input` (`{to}` or `{by}`), stopping at each instant
 * something falls due to bill it there: renewals, retries, the end of finite plans, open attempts
 * resolved, and checkout tokens expiring unpaid (announced as the expiry sweep would).
 * `services.clock` is real time; the shop's time is it plus the stored offset, which is what the
 * billing engine reads too. With `keyed` (an Idempotency-Key, phased: no transaction is held across
 * the billing runs and their gateway calls), the start and target are recorded first, and a retry
 * after a crash resumes towards the same target.
 */
export async function advanceTestClock(
  services: Services,
  shopId: number,
  input: unknown,
  keyed?: KeyedRequest,
): Promise<AdvanceSummary> {
  const shop = await testShop(services.db, shopId);
  const realNow = () => services.clock.now().getTime();
  // A keyed advance retried after its first run stopped keeps that run's start and target: a `by`
  // is never added twice.
  const resumed = keyed?.resource;
  let from = new Date(realNow() + shop.clockOffsetMs);
  let target: number;
  if (typeof resumed?.from === 'string' && typeof resumed.to === 'string') {
    from = new Date(resumed.from);
    target = Date.parse(resumed.to);
  } else {
    target = advanceTarget(input, from, shop.timeZone).getTime();
    if (keyed) {
      const resource = { from: from.toISOString(), to: new Date(target).toISOString() };
      await services.db.query(keyed.advance('started', resource));
    }
  }
  const total = { ...emptySummary(), runs: 0 };
  let waits = 0;
  let expiredCheckouts = 0;
  let previous: { due: number; idle: boolean } | undefined;
  for (;;) {
    const due = earliest(
      await nextDueOfShop(services.db, shopId),
      await nextExpiryOfShop(services.db, shopId),
      await nextCancelledAttemptOfShop(services.db, shopId, LEASE_MS),
    );
    if (due === undefined || due > target) break;
    if (total.runs >= MAX_RUNS) {
      const offset = (await testShop(services.db, shopId)).clockOffsetMs;
      const at = new Date(realNow() + offset).toISOString();
      throw ApiError.validation({ base: [TestClockMsg.tooManyRuns(MAX_RUNS, at)] });
    }
    // Still due where the last run found nothing to do: a run elsewhere holds those subscriptions.
    if (previous?.due === due && previous.idle) {
      if (++waits > MAX_BUSY_WAITS) throw ApiError.base('conflict', TestClockMsg.busy);
      await new Promise((r) => setTimeout(r, BUSY_WAIT_MS));
    } else waits = 0;
    // Never backwards: something already overdue is billed at the shop's present time.
    await moveShopClock(services.db, shopId, due - realNow());
    const run = await billDue(services, { shopId });
    const expired = await sweepExpiredCheckouts(services, shopId);
    add(total, run);
    total.runs++;
    expiredCheckouts += expired;
    previous = { due, idle: idle(run) && expired === 0 };
  }
  const offset = await moveShopClock(services.db, shopId, target - realNow());
  return {
    test_clock: view(services, offset, shop.timeZone),
    advanced_from: from.toISOString(),
    billing: total,
    expired_checkouts: expiredCheckouts,
  };
}
