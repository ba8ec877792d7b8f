import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { KillingProxy } from '../foundation/killing-proxy.js';
import {
  type BillStore,
  killNow,
  type LedgerReport,
  ledgerReport,
  openBillStore,
  seedDueSubscriptions,
  startBill,
} from './bill-store.js';

/**
 * The kill -9 rounds of the billing tests (crash.test.ts, crash-http.test.ts): real `kopek bill`
 * processes killed at random moments, then restarted, with the store questioned after every step.
 */

/** A store of its own with `count` due subscriptions; `stores` collects it, to be dropped. */
export async function seededStore(stores: BillStore[], count: number): Promise<BillStore> {
  const s = await openBillStore();
  stores.push(s);
  const started = performance.now();
  await seedDueSubscriptions(s, count);
  console.log(`seeded ${count} due subscriptions in ${Math.round(performance.now() - started)} ms`);
  return s;
}

/** The parts of a report that must be empty at every moment, even right after a kill. */
export const clean = (r: LedgerReport) => ({
  paidTwice: r.paidTwice,
  unrecorded: r.unrecorded,
  unpaidRecords: r.unpaidRecords,
  abandonedCharged: r.abandonedCharged,
});
export const CLEAN = { paidTwice: [], unrecorded: [], unpaidRecords: [], abandonedCharged: [] };

/**
 * The report once nothing moves any more: a gateway server may still finish a request the killed
 * process sent, and counting before it commits would miscount what the kill left.
 */
async function stillLedger(s: BillStore): Promise<LedgerReport> {
  let last = await ledgerReport(s, 2);
  for (;;) {
    await sleep(300);
    const now = await ledgerReport(s, 2);
    if (now.payments === last.payments && now.awaitingRecord === last.awaitingRecord) return now;
    last = now;
  }
}

export interface CrashOptions {
  /** How many runs are killed. */
  rounds: number;
  /** A run is killed after up to this many payments (and claims a batch of 100 beyond them). */
  payments: number;
  /** The billing processes' extra environment (a gateway over HTTP). */
  env?: NodeJS.ProcessEnv;
  /**
   * A proxy between the billing runs and their gateway over HTTP: after the random kills, one more
   * run is killed by it, the moment the gateway has answered a payment and before the answer
   * arrives, so at least one payment waits for its record and the query that resolves such an
   * attempt is put to the test whatever the random kills hit.
   */
  proxy?: KillingProxy;
  /** Runs claim, charge and record each renewal in one transaction: no kill can leave one open. */
  leavesNothingOpen?: boolean;
}

/**
 * Kills `kopek bill` runs at random moments, restarts billing at once (which must leave the killed
 * runs' leased attempts alone), lets the leases run out and bills again; checks the store after
 * every step. Returns the store as the kills left it.
 */
export async function crashThenRecover(s: BillStore, n: number, opts: CrashOptions): Promise<LedgerReport> {
  const progress = async () => {
    const [row] = await s.db.query<{ claimed: number; paid: number }>(
      `SELECT count(*)::int AS claimed, (count(*) FILTER (WHERE status = 'successful'))::int AS paid
       FROM subscription_charges WHERE period = 2`,
    );
    return row ?? { claimed: 0, paid: 0 };
  };
  const kills: string[] = [];
  const told = () => kills.join('\n');
  let mark = performance.now();
  const took = () => {
    const ms = Math.round(performance.now() - mark);
    mark = performance.now();
    return `${ms} ms`;
  };
  let report = await ledgerReport(s, 2);
  const lastRound = opts.proxy ? opts.rounds : opts.rounds - 1;
  for (let round = 0; round <= lastRound; round++) {
    const byProxy = opts.proxy !== undefined && round === lastRound;
    // A random moment, in progress rather than time (so that a fast or a loaded machine kills
    // within the same stretch of work): once the run has claimed and then recorded a random number
    // of payments, and a random few milliseconds later, inside whatever charge it is at.
    const before = await progress();
    const payments = Math.floor(Math.random() * opts.payments);
    const extra = Math.floor(Math.random() * 30);
    const run = startBill(s, opts.env);
    let exited = false;
    void run.exited.then(() => {
      exited = true;
    });
    for (;;) {
      const now = await progress();
      if (exited || (now.claimed > before.claimed && now.paid >= before.paid + payments)) break;
      await sleep(10);
    }
    if (byProxy && !exited) {
      opts.proxy?.killOnNextPayment(run.child);
      await run.exited;
    } else {
      await sleep(extra);
      await killNow(run);
    }
    if (run.child.signalCode !== 'SIGKILL')
      throw new Error(`kopek bill ended before it was killed (too few subscriptions?):\n${run.output()}`);
    report = await stillLedger(s);
    const when = byProxy
      ? `after ${payments} payments, at a payment's answer`
      : `after ${payments} payments + ${extra} ms`;
    kills.push(
      `${when}: ${report.payments} paid, ${report.open} open, ${report.awaitingRecord} paid and waiting for their record`,
    );
    // A process killed at any moment leaves no money unrecorded (its attempt still open counts as a
    // record to be completed), none taken twice, no record without its money.
    expect(clean(report), told()).toEqual(CLEAN);
  }
  console.log(`kills (${took()}):\n  ${told().replaceAll('\n', '\n  ')}`);
  const stale = report;

  // The killed runs' unfinished attempts: leased, so not due for five minutes.
  const leased = await s.db.query<{ id: string }>(
    `SELECT s.id FROM subscriptions s JOIN subscription_charges c ON c.subscription_id = s.id
     WHERE c.status IN ('pending', 'unknown') AND s.renew_at > now() + interval '4 minutes'
     ORDER BY s.id`,
  );
  expect(leased.length, told()).toBe(stale.open);
  // Had every kill fallen between two batches, the lease's resolution would go untested (unless the
  // runs leave nothing open to resolve).
  if (opts.leavesNothingOpen) expect(stale.open, told()).toBe(0);
  else expect(stale.open, told()).toBeGreaterThan(0);

  // A restart at once bills everything else and leaves the leased attempts alone.
  const restart = await startBill(s, opts.env).summary();
  console.log(`restart: ${restart.charged} charged in ${took()}`);
  const recorded = stale.payments - stale.awaitingRecord;
  expect(restart, told()).toMatchObject({ charged: n - recorded - stale.open, resolved: 0, unknown: 0 });
  expect(restart.successful).toBe(restart.charged);
  const waiting = await ledgerReport(s, 2);
  expect(clean(waiting)).toEqual(CLEAN);
  expect(waiting.open).toBe(stale.open);
  expect(waiting.awaitingRecord).toBe(stale.awaitingRecord);
  expect(waiting.due).toBe(0);
  expect(waiting.notRenewed).toEqual(leased.slice(0, 20).map((r) => r.id));

  // The leases run out. A lease is nothing but the subscription's renew_at, so moving it to now is
  // what five minutes passing would do, without the wait. Only subscriptions whose attempt is still
  // open move; no process that claimed one is alive, and no request of theirs is still on its way.
  await s.db.query(
    `UPDATE subscriptions SET renew_at = now() - interval '1 second'
     WHERE id IN (SELECT subscription_id FROM subscription_charges WHERE status IN ('pending', 'unknown'))`,
  );
  const after = await startBill(s, opts.env).summary();
  console.log(`after the leases: ${after.resolved} resolved, ${after.charged} charged in ${took()}`);
  // Each open attempt is resolved by a query: a payment found is recorded as it is; an attempt the
  // gateway never saw is abandoned and its period charged under a new attempt.
  const abandoned = stale.open - stale.awaitingRecord;
  expect(after, told()).toMatchObject({ resolved: stale.open, charged: abandoned, successful: abandoned });

  const final = await ledgerReport(s, 2);
  expect(final.subscriptions).toBe(n);
  expect(clean(final)).toEqual(CLEAN);
  expect(final.notRenewed).toEqual([]);
  expect(final.payments).toBe(n);
  expect(final.open).toBe(0);
  expect(final.awaitingRecord).toBe(0);
  expect(final.due).toBe(0);
  const [left] = await s.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM subscription_charges WHERE status = 'abandoned' AND period = 2`,
  );
  expect(left?.n).toBe(abandoned);
  return stale;
}
