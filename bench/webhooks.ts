/**
 * `npm run bench -- webhooks`: webhook delivery on PostgreSQL. For each backlog size (BENCH_WEBHOOKS,
 * default 100000; a comma-separated list runs each) and each number of delivering processes
 * (BENCH_WEBHOOK_PROCESSES, default "1,2"), in a schema of its own:
 *
 * 1. starts the receiver (webhooks-receiver.ts, in this process) and seeds that many notifications
 *    due to it (webhooks-seed.ts; not measured): BENCH_WEBHOOK_SHOPS test shops (default 16), each
 *    with its own key, and 2 events per subscription (BENCH_WEBHOOK_PER_SUBSCRIPTION);
 * 2. runs the baseline: as many processes as deliverers, each NOTIFY_CONCURRENCY bare POST loops to
 *    the same receiver, for BENCH_DURATION seconds after BENCH_WARMUP;
 * 3. runs the deliverers: that many processes, each the delivery loop `kopek serve` runs
 *    (startDelivery), started together; deliveries/s counts from the start to the last notification's
 *    arrival. The backlog counts as created when delivery starts (seeding is left out), so its p99
 *    is how long 99 % of it waited for that start;
 * 4. with BENCH_WEBHOOK_RATE > 0 (default 500), new notifications are then written at that rate for
 *    BENCH_DURATION seconds while the same processes deliver them: the p99 from each one's created_at
 *    (stamped by PostgreSQL as it is written) to its arrival, the latency of a store that keeps up;
 * 5. checks, by SQL and by what the receiver got, that every notification was delivered exactly once
 *    (delivered, one 2xx attempt, arrived once, none unknown, a subscription's in order, a sample of
 *    signatures valid), runs the baseline again, and drops the schema.
 *
 * Then the backlog case (BENCH_WEBHOOK_CASES, default "spread,backlog", chooses which run): one shop's
 * backlog of BENCH_WEBHOOK_BACKLOG notifications (default 100000), as a receiver's outage leaves it,
 * with the statistics of the store never collected (no ANALYZE, autovacuum off for its tables), drained
 * by BENCH_WEBHOOK_BACKLOG_PROCESSES deliverers (default 2) with NOTIFY_SHOP_CONCURRENCY as given: steps
 * 1 to 3 and 5 above, without new notifications.
 *
 * It prints deliveries/s, the ratio to the baseline's POSTs/s, latency, CPU per delivery of the
 * deliverers, of PostgreSQL and of the receiver, statements and WAL per delivery and RSS, as a table
 * and as one BENCH_JSON line, and writes bench/results/webhooks.json. BENCH_PROFILE=1 writes the
 * deliverers' CPU profiles to bench/results/profiles/webhooks-<count>x<processes>/ and prints where
 * their time went during the backlog. BENCH_LOG_LEVEL sets the deliverers' LOG_LEVEL (default warn,
 * as the other benchmarks run their servers; at debug every attempt is logged). NOTIFY_CONCURRENCY,
 * NOTIFY_SHOP_CONCURRENCY, NOTIFY_INTERVAL_MS and DATABASE_POOL_SIZE are passed on to the deliverers
 * (and the first to the baseline) as `kopek serve` would read them.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { type ProfileSummary, summarizeProfile } from './cpuprofile.js';
import { type Child, guardRun, ROOT, stopChild } from './processes.js';
import type { Usage } from './renewals-messages.js';
import type { BaselineDone, DeliverLap } from './webhooks-messages.js';
import { type Receiver, startReceiver } from './webhooks-receiver.js';
import { copyEvents, type SeededWebhooks, seedWebhooks } from './webhooks-seed.js';
import {
  checkpoint,
  codeMeasured,
  finish,
  intList,
  markDatabase,
  onMessage,
  profilesOf,
  release,
  round,
  sinceMark,
  startWorkers,
  withClient,
  withSearchPath,
} from './workers.js';

const DEFAULT_DB = 'postgres://postgres@127.0.0.1:5432/test';
const WORKER = 'webhooks-worker.ts';
/** The issue's target on the 2-core machine: deliveries/s, with none lost and none twice. */
export const WEBHOOK_GOALS = { minPerSec: 3000 };

/** Milliseconds on the wall clock, finer than Date.now(): the receiver stamps arrivals the same way. */
const origin = Date.now() - performance.now();
const wallNow = () => origin + performance.now();

/** CPU time of the whole machine so far, from /proc/stat (in USER_HZ ticks); undefined off Linux. */
function machineTicks(): { busy: number; all: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const all = t.reduce((a, b) => a + b, 0);
    // idle and iowait are the time no CPU worked.
    return { busy: all - (t[3] ?? 0) - (t[4] ?? 0), all };
  } catch {
    return undefined;
  }
}

/** The machine's CPU time since `from`, in ms (USER_HZ is 100: a tick is 10 ms). */
function machineSince(from: ReturnType<typeof machineTicks>) {
  const to = machineTicks();
  if (!from || !to || to.all === from.all) return undefined;
  return { busyMs: (to.busy - from.busy) * 10, allMs: (to.all - from.all) * 10 };
}

/** CPU milliseconds of this process (the receiver's) since `from`. */
const ownCpuMs = (from: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

function percentiles(values: number[]): { p50Ms: number; p99Ms: number; maxMs: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? 0;
  return { p50Ms: round(at(0.5), 1), p99Ms: round(at(0.99), 1), maxMs: round(at(1), 1) };
}

interface BaselineFigures {
  postsPerSec: number;
  concurrency: number;
  non2xx: number;
  /** CPU per POST of the posting processes, and of the receiver. */
  cpuMsPerPost: number;
  receiverCpuMsPerPost: number;
}

/** k processes, each NOTIFY_CONCURRENCY bare POST loops to the receiver. */
async function runBaseline(
  k: number,
  env: NodeJS.ProcessEnv,
  settings: { durationSec: number; warmupSec: number },
  receiver: Receiver,
  children: Child[],
): Promise<BaselineFigures> {
  const workers = await startWorkers(WORKER, 'baseline', k, env, [], children);
  const before = { others: receiver.others, cpu: process.cpuUsage() };
  const base = await finish<BaselineDone>(workers, settings);
  const receiverCpuMs = ownCpuMs(before.cpu);
  const allPosts = receiver.others - before.others;
  await release(workers);
  const posts = base.reduce((a, b) => a + b.posts, 0);
  const sent = base.reduce((a, b) => a + b.allPosts, 0);
  if (sent !== allPosts) throw new Error(`baseline: ${sent} POSTs answered, but ${allPosts} arrived`);
  const seconds = Math.max(...base.map((b) => b.ms)) / 1000;
  return {
    postsPerSec: Math.round(posts / seconds),
    concurrency: base.reduce((a, b) => a + b.concurrency, 0),
    non2xx: base.reduce((a, b) => a + b.non2xx, 0),
    cpuMsPerPost: round(base.reduce((a, b) => a + b.cpuMs, 0) / posts, 3),
    // The receiver's CPU covers the warm-up too.
    receiverCpuMsPerPost: round(receiverCpuMs / allPosts, 3),
  };
}

/** What the deliverers did in a phase, summed over the processes. */
function sumLaps(laps: DeliverLap[]) {
  const statements = new Map<string, number>();
  for (const l of laps)
    for (const [s, n] of Object.entries(l.statements)) statements.set(s, (statements.get(s) ?? 0) + n);
  return {
    delivered: laps.reduce((a, l) => a + l.outcomes.delivered, 0),
    retry: laps.reduce((a, l) => a + l.outcomes.retry, 0),
    failed: laps.reduce((a, l) => a + l.outcomes.failed, 0),
    cpuMs: laps.reduce((a, l) => a + l.cpuMs, 0),
    roundTrips: laps.reduce((a, l) => a + l.roundTrips, 0),
    transactions: laps.reduce((a, l) => a + l.transactions, 0),
    statements,
  };
}

async function lapAll(workers: Child[]): Promise<DeliverLap[]> {
  const laps = workers.map((w) => onMessage<DeliverLap>(w));
  for (const w of workers) w.proc.send({ type: 'lap' });
  return Promise.all(laps);
}

/**
 * Waits until `n` notifications have arrived; fails when none arrives for `stallSec`, with what the
 * store says of the others.
 */
export async function awaitArrivals(
  receiver: Receiver,
  n: number,
  url: string,
  stallSec: number,
  signal: AbortSignal,
) {
  const all = receiver.whenReceived(n);
  let seen = receiver.receivedAt.size;
  let lastProgress = performance.now();
  for (;;) {
    const tick = new Promise((r) => setTimeout(r, 1000));
    if ((await Promise.race([all.then(() => true), tick.then(() => false)])) === true) return;
    if (signal.aborted) throw signal.reason;
    if (receiver.receivedAt.size > seen) {
      seen = receiver.receivedAt.size;
      lastProgress = performance.now();
    } else if (performance.now() - lastProgress > stallSec * 1000) {
      const state = await withClient(url, (c) =>
        c.query(`SELECT status, attempts, count(*)::int AS n FROM deliveries GROUP BY 1, 2 ORDER BY 1, 2`),
      );
      throw new Error(
        `no notification arrived for ${stallSec} s: ${receiver.receivedAt.size} of ${n} arrived; events by status and attempts: ${JSON.stringify(state.rows)}`,
      );
    }
  }
}

/** Until no notification is pending in the store: the last outcomes are recorded after their arrival. */
export async function awaitRecorded(url: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  return withClient(url, async (c) => {
    for (;;) {
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`);
      if (rows[0].n === 0) return performance.now() - started;
      if (performance.now() - started > timeoutMs)
        throw new Error(`${rows[0].n} notifications still pending`);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
}

export interface Verification {
  ok: boolean;
  problems: string[];
  counts: Record<string, number>;
}

/**
 * Every notification of the store delivered exactly once: by SQL (delivered, one attempt, a 2xx) and
 * by the receiver (each arrived once, none it did not know, a subscription's in id order, signatures).
 */
export async function verifyDelivery(
  url: string,
  receiver: Receiver,
  expected: number,
): Promise<Verification> {
  return withClient(url, async (c) => {
    const { rows } = await c.query(
      `WITH per_event AS (
         SELECT e.id, d.status, d.attempts, d.delivered_at, d.leased_until, count(a.event_id) AS tries,
                count(a.event_id) FILTER (WHERE a.status_code BETWEEN 200 AND 299) AS ok
         FROM events e LEFT JOIN deliveries d ON d.event_id = e.id AND d.shop_id = e.shop_id
           LEFT JOIN event_attempts a ON a.event_id = e.id AND a.shop_id = e.shop_id
         GROUP BY e.id, e.shop_id, d.event_id, d.shop_id
       )
       SELECT count(*)::int AS events,
         count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE attempts <> 1)::int AS attempt_number_not_1,
         count(*) FILTER (WHERE tries <> 1)::int AS not_exactly_one_attempt_row,
         count(*) FILTER (WHERE ok <> 1)::int AS not_exactly_one_2xx_attempt,
         count(*) FILTER (WHERE delivered_at IS NULL OR leased_until IS NOT NULL)::int AS unsettled,
         (SELECT count(*) FROM event_attempts)::int AS attempt_rows
       FROM per_event`,
    );
    const counts = rows[0] as Record<string, number>;
    // Losses, duplicates and order, from the receiver's side.
    const { rows: events } = await c.query<{ id: string; resource_id: string }>(
      'SELECT id, resource_id FROM events ORDER BY resource_id, id',
    );
    const known = new Set<number>();
    let missing = 0;
    let outOfOrder = 0;
    let previous: { resource: string; at: number } | undefined;
    for (const e of events) {
      const id = Number(e.id);
      known.add(id);
      const at = receiver.receivedAt.get(id);
      if (at === undefined) {
        missing++;
        continue;
      }
      if (previous?.resource === e.resource_id && at < previous.at) outOfOrder++;
      previous = { resource: e.resource_id, at };
    }
    let unknown = 0;
    for (const id of receiver.receivedAt.keys()) if (!known.has(id)) unknown++;
    Object.assign(counts, {
      arrived: receiver.receivedAt.size,
      arrived_twice_or_more: receiver.duplicates.length,
      never_arrived: missing,
      arrived_unknown: unknown,
      arrived_out_of_order_in_subscription: outOfOrder,
      signatures_checked: receiver.signatures.checked,
      signatures_bad: receiver.signatures.bad + receiver.signatures.unknownShop,
    });
    const want: Record<string, number> = {
      events: expected,
      delivered: expected,
      attempt_number_not_1: 0,
      not_exactly_one_attempt_row: 0,
      not_exactly_one_2xx_attempt: 0,
      unsettled: 0,
      attempt_rows: expected,
      arrived: expected,
      arrived_twice_or_more: 0,
      never_arrived: 0,
      arrived_unknown: 0,
      arrived_out_of_order_in_subscription: 0,
      signatures_bad: 0,
    };
    const problems = Object.entries(want)
      .filter(([k, v]) => counts[k] !== v)
      .map(([k, v]) => `${k}: ${counts[k]}, expected ${v}`);
    if (receiver.signatures.checked === 0) problems.push('no signature was checked');
    return { ok: problems.length === 0, problems, counts };
  });
}

interface PhaseFigures {
  notifications: number;
  seconds: number;
  deliveriesPerSec: number;
  /** ms from creation (the backlog: the start of delivery) to arrival. */
  latency: { p50Ms: number; p99Ms: number; maxMs: number };
  /** Deliverers' CPU; the PostgreSQL backends serving them; every PostgreSQL process; the receiver. */
  engineCpuMsPerDelivery: number;
  databaseCpuMsPerDelivery: number | null;
  databaseAllCpuMsPerDelivery: number | null;
  receiverCpuMsPerDelivery: number;
  statementsPerDelivery: number;
  roundTripsPerDelivery: number;
  transactionsPerDelivery: number;
  statements: { statement: string; perDelivery: number }[];
  walBytesPerDelivery: number;
  /**
   * The whole machine (every process, this benchmark's and anything else running): how busy its CPUs
   * were, their CPU per delivery, and the share of their time used by anything but the deliverers,
   * their PostgreSQL backends and the receiver (PostgreSQL's WAL writer, checkpointer and autovacuum,
   * the kernel's loopback work… and whatever else runs on the machine: above a few %, other work
   * competed with the run and its deliveries/s are low).
   */
  machine: { busyShare: number; cpuMsPerDelivery: number; otherShare: number } | null;
  outcomes: { delivered: number; retry: number; failed: number };
}

function phaseFigures(
  laps: DeliverLap[],
  n: number,
  seconds: number,
  latencies: number[],
  used: Awaited<ReturnType<typeof sinceMark>>,
  receiverCpuMs: number,
  machineUsed: ReturnType<typeof machineSince>,
): PhaseFigures {
  const sum = sumLaps(laps);
  const per = (x: number) => (n > 0 ? x / n : 0);
  const ours = sum.cpuMs + receiverCpuMs + (used.backendsSec ?? 0) * 1000;
  const machine = machineUsed
    ? {
        busyShare: round(machineUsed.busyMs / machineUsed.allMs, 2),
        cpuMsPerDelivery: round(per(machineUsed.busyMs), 3),
        otherShare: round(Math.max(0, machineUsed.busyMs - ours) / machineUsed.allMs, 2),
      }
    : null;
  const totalStatements = [...sum.statements.values()].reduce((a, b) => a + b, 0);
  return {
    notifications: n,
    seconds: round(seconds, 2),
    deliveriesPerSec: Math.round(n / seconds),
    latency: percentiles(latencies),
    engineCpuMsPerDelivery: round(per(sum.cpuMs), 3),
    databaseCpuMsPerDelivery: used.backendsSec === null ? null : round(per(used.backendsSec * 1000), 3),
    databaseAllCpuMsPerDelivery: used.allSec === null ? null : round(per(used.allSec * 1000), 3),
    receiverCpuMsPerDelivery: round(per(receiverCpuMs), 3),
    statementsPerDelivery: round(per(totalStatements), 2),
    roundTripsPerDelivery: round(per(sum.roundTrips), 3),
    transactionsPerDelivery: round(per(sum.transactions), 3),
    statements: [...sum.statements.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([statement, x]) => ({ statement, perDelivery: round(per(x), 3) })),
    walBytesPerDelivery: Math.round(per(used.walBytes)),
    machine,
    outcomes: { delivered: sum.delivered, retry: sum.retry, failed: sum.failed },
  };
}

const rssOf = (laps: Usage[]) =>
  laps.map(({ maxRssMb, rssAtStartMb, rssPeakRunMb, heapUsedMb, rssEverySecondMb: t }) => ({
    maxRssMb,
    rssAtStartMb,
    rssPeakRunMb,
    heapUsedMb,
    /** RSS when a tenth, half and all of the run's seconds had passed: flat, or growing with the backlog. */
    rssAtTenthHalfEndMb: [0.1, 0.5, 1].flatMap((f) => {
      const v = t[Math.max(0, Math.ceil(t.length * f) - 1)];
      return v === undefined ? [] : [v];
    }),
  }));

/** The spread backlog (many shops, statistics collected), or one shop's with statistics never collected. */
export type WebhookCase = 'spread' | 'one-shop backlog';

export interface WebhookRun {
  case: WebhookCase;
  /** Whether the store's statistics were collected after seeding, or never. */
  statistics: 'collected' | 'never';
  notifications: number;
  processes: number;
  /** The code the deliverers loaded: others may commit to this tree while a run goes on. */
  kopek: { commit: string; srcChanged: string[] };
  shops: number;
  subscriptions: number;
  seedSec: number;
  /** The bare POST loops' POSTs/s: the mean of their runs right before and right after the deliverers'. */
  baseline: { postsPerSec: number; before: BaselineFigures; after: BaselineFigures };
  backlog: PhaseFigures;
  ratio: number;
  /** From the last arrival until the store had recorded every outcome. */
  recordedAfterLastArrivalMs: number;
  steady?: PhaseFigures & { rate: number };
  /** Per deliverer process, over the backlog. */
  rss: ReturnType<typeof rssOf>;
  verified: Verification;
  profile?: ProfileSummary;
}

/** Writes new notifications due now at `rate` per second for `seconds`, a batch every 10 ms. */
async function feed(url: string, seeded: SeededWebhooks, rate: number, seconds: number): Promise<number> {
  const feederUrl = new URL(url);
  // Its own name: the deliverers' backends are told apart by theirs.
  feederUrl.searchParams.set('application_name', `${feederUrl.searchParams.get('application_name')}-feeder`);
  const client = new pg.Client({ connectionString: feederUrl.toString() });
  await client.connect();
  try {
    const db = {
      query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
    };
    const started = performance.now();
    let written = 0;
    for (;;) {
      const elapsed = (performance.now() - started) / 1000;
      const target = Math.min(Math.floor(rate * elapsed), Math.floor(rate * seconds));
      if (target > written) {
        // New subscriptions, each with one event; numbered after the backlog's.
        const from = seeded.count + written + 1;
        await copyEvents(db, {
          modelEventId: seeded.modelEventId,
          originalId: seeded.originalId,
          shopIds: seeded.shops.map((s) => s.id),
          from,
          to: seeded.count + target,
          resources: Number.MAX_SAFE_INTEGER,
          at: 'clock_timestamp()',
        });
        written = target;
      }
      if (elapsed >= seconds) return written;
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await client.end();
  }
}

async function runOne(
  baseDbUrl: string,
  count: number,
  k: number,
  settings: {
    durationSec: number;
    warmupSec: number;
    shops: number;
    perSubscription: number;
    rate: number;
    case: WebhookCase;
    statistics: 'collected' | 'never';
  },
  local: boolean,
  children: Child[],
  signal: AbortSignal,
): Promise<WebhookRun> {
  const schema = `kopek_bench_webhooks_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = withSearchPath(baseDbUrl, schema);
  const checkAborted = () => {
    if (signal.aborted) throw signal.reason;
  };
  await withClient(baseDbUrl, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const receiver = await startReceiver();
  try {
    console.log(
      `\n${settings.case}: ${count} notifications, ${k} delivering process${k === 1 ? '' : 'es'}, statistics ${settings.statistics === 'never' ? 'never collected' : 'collected'} (schema ${schema})`,
    );
    const seedStarted = performance.now();
    const seeded = await seedWebhooks(url, {
      count,
      shops: settings.shops,
      perResource: settings.perSubscription,
      url: receiver.url,
      statistics: settings.statistics,
    });
    const seedSec = round((performance.now() - seedStarted) / 1000, 1);
    receiver.trust(new Map(seeded.shops.map((s) => [s.id, s.publicKey])));
    const body = await withClient(url, async (c) => {
      const { rows } = await c.query('SELECT payload::text AS body FROM events WHERE id = $1', [
        seeded.modelEventId,
      ]);
      return rows[0].body as string;
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: url,
      KOPEK_MASTER_KEY: seeded.masterKeyHex,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
      NODE_ENV: 'production',
      BENCH_RECEIVER_URL: receiver.url,
      BENCH_BODY: body,
      // The receiver is on loopback: on PostgreSQL, test shops reach it within the operator's list.
      KOPEK_OUTBOUND_ALLOW: '127.0.0.1/32',
    };
    for (const name of ['GATEWAY_URL', 'CHECKOUT_URL', 'DATA_DIR', 'PUBLIC_URL']) delete env[name];
    checkAborted();

    console.log(
      `  seeded in ${seedSec} s (${seeded.shops.length} shops, ${seeded.resources} subscriptions); baseline: ${k} × bare POST loops, ${settings.durationSec} s…`,
    );
    await checkpoint(baseDbUrl);
    const before = await runBaseline(k, env, settings, receiver, children);
    console.log(`  baseline: ${before.postsPerSec} POSTs/s; deliverers: ${count} notifications…`);
    await checkpoint(baseDbUrl);
    checkAborted();

    const profileDir = join(ROOT, 'bench', 'results', 'profiles', `webhooks-${count}x${k}`);
    const profiling = Boolean(process.env.BENCH_PROFILE);
    if (profiling) rmSync(profileDir, { recursive: true, force: true });
    const nodeArgs = profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const kopek = codeMeasured();
    const deliverers = await startWorkers(WORKER, 'deliver', k, env, nodeArgs, children);
    let mark = await markDatabase(baseDbUrl, local, schema);
    let cpu = process.cpuUsage();
    let ticks = machineTicks();
    for (const w of deliverers) w.proc.send({ type: 'go' });
    const started = wallNow();
    await awaitArrivals(receiver, count, url, 30, signal);
    let machine = machineSince(ticks);
    let lastArrival = 0;
    for (const at of receiver.receivedAt.values()) lastArrival = Math.max(lastArrival, at);
    const recordedMs = await awaitRecorded(url, 60_000);
    const backlogLaps = await lapAll(deliverers);
    let used = await sinceMark(baseDbUrl, mark);
    let receiverCpuMs = ownCpuMs(cpu);
    const backlog = phaseFigures(
      backlogLaps,
      count,
      (lastArrival - started) / 1000,
      [...receiver.receivedAt.values()].map((at) => at - started),
      used,
      receiverCpuMs,
      machine,
    );
    console.log(
      `  ${backlog.deliveriesPerSec} deliveries/s (${backlog.seconds} s), p99 ${backlog.latency.p99Ms} ms from the start`,
    );
    checkAborted();

    let steady: WebhookRun['steady'];
    let total = count;
    if (settings.rate > 0) {
      console.log(`  steady: ${settings.rate} new notifications/s for ${settings.durationSec} s…`);
      const arrivedBefore = new Set(receiver.receivedAt.keys());
      mark = await markDatabase(baseDbUrl, local, schema);
      cpu = process.cpuUsage();
      ticks = machineTicks();
      const steadyStarted = wallNow();
      const fed = await feed(url, seeded, settings.rate, settings.durationSec);
      total = count + fed;
      await awaitArrivals(receiver, total, url, 30, signal);
      const steadyEnded = wallNow();
      machine = machineSince(ticks);
      await awaitRecorded(url, 60_000);
      const laps = await lapAll(deliverers);
      used = await sinceMark(baseDbUrl, mark);
      receiverCpuMs = ownCpuMs(cpu);
      const created = await withClient(url, async (c) => {
        const { rows } = await c.query(
          `SELECT id, extract(epoch FROM created_at)::float8 * 1000 AS at FROM events WHERE id <> ALL($1::bigint[])`,
          [[...arrivedBefore]],
        );
        return rows as { id: string; at: number }[];
      });
      const latencies = created.map((r) => (receiver.receivedAt.get(Number(r.id)) ?? Number.NaN) - r.at);
      steady = {
        rate: settings.rate,
        ...phaseFigures(
          laps,
          fed,
          (steadyEnded - steadyStarted) / 1000,
          latencies,
          used,
          receiverCpuMs,
          machine,
        ),
      };
      console.log(
        `  steady: p50 ${steady.latency.p50Ms} ms, p99 ${steady.latency.p99Ms} ms from creation to arrival`,
      );
    }

    const ended = deliverers.map((w) => onMessage<DeliverLap>(w));
    for (const w of deliverers) w.proc.send({ type: 'stop' });
    await Promise.all(ended);
    await release(deliverers);
    checkAborted();
    const verified = await verifyDelivery(url, receiver, total);

    console.log('  baseline again…');
    await checkpoint(baseDbUrl);
    const after = await runBaseline(k, env, settings, receiver, children);
    const baselinePostsPerSec = Math.round((before.postsPerSec + after.postsPerSec) / 2);
    const profiles = profiling
      ? profilesOf(
          profileDir,
          deliverers.map((d) => d.proc.pid),
        )
      : undefined;
    return {
      case: settings.case,
      statistics: settings.statistics,
      notifications: count,
      processes: k,
      kopek,
      shops: seeded.shops.length,
      subscriptions: seeded.resources,
      seedSec,
      baseline: { postsPerSec: baselinePostsPerSec, before, after },
      backlog,
      ratio: round(backlog.deliveriesPerSec / baselinePostsPerSec, 2),
      recordedAfterLastArrivalMs: Math.round(recordedMs),
      ...(steady ? { steady } : {}),
      rss: rssOf(backlogLaps),
      verified,
      ...(profiles
        ? {
            profile: summarizeProfile(
              profiles,
              backlogLaps.map((l) => l.window),
            ),
          }
        : {}),
    };
  } finally {
    await Promise.all(children.splice(0).map((c) => stopChild(c)));
    await receiver.close();
    await withClient(baseDbUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).catch(
      (err: unknown) => console.error(`could not drop schema ${schema}:`, err),
    );
  }
}

function formatRuns(runs: WebhookRun[]): string {
  const header = [
    'case',
    'notifications',
    'processes',
    'deliveries/s',
    'baseline POSTs/s (before, after)',
    'ratio',
    'p50 / p99 ms from start',
    'engine CPU ms/delivery',
    'PostgreSQL backends CPU ms/delivery',
    'receiver CPU ms/delivery',
    'machine: CPUs busy, CPU ms/delivery, other work',
    'statements/delivery',
    'transactions/delivery',
    'WAL KB/delivery',
    'RSS MB: start → peak',
    `steady p50 / p99 ms`,
    'verified',
  ];
  const rows = runs.map((r) => [
    r.statistics === 'never' ? `${r.case}, statistics never collected` : r.case,
    String(r.notifications),
    String(r.processes),
    String(r.backlog.deliveriesPerSec),
    `${r.baseline.postsPerSec} (${r.baseline.before.postsPerSec}, ${r.baseline.after.postsPerSec})`,
    r.ratio.toFixed(2),
    `${r.backlog.latency.p50Ms} / ${r.backlog.latency.p99Ms}`,
    r.backlog.engineCpuMsPerDelivery.toFixed(3),
    r.backlog.databaseCpuMsPerDelivery === null ? '-' : r.backlog.databaseCpuMsPerDelivery.toFixed(3),
    r.backlog.receiverCpuMsPerDelivery.toFixed(3),
    r.backlog.machine === null
      ? '-'
      : `${Math.round(r.backlog.machine.busyShare * 100)} %, ${r.backlog.machine.cpuMsPerDelivery.toFixed(3)}, ${Math.round(r.backlog.machine.otherShare * 100)} %`,
    r.backlog.statementsPerDelivery.toFixed(2),
    r.backlog.transactionsPerDelivery.toFixed(3),
    (r.backlog.walBytesPerDelivery / 1024).toFixed(1),
    r.rss.map((x) => `${x.rssAtStartMb} → ${x.rssPeakRunMb}`).join(', '),
    r.steady ? `${r.steady.latency.p50Ms} / ${r.steady.latency.p99Ms} @${r.steady.rate}/s` : '-',
    r.verified.ok ? 'yes' : 'NO',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((w) => `${'-'.repeat(w + 1)}:`).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Runs the webhook benchmark; the process's exit code. */
export async function runWebhooks(): Promise<number> {
  const loadAtStart = round(loadavg()[0] ?? 0, 2);
  const counts = intList('BENCH_WEBHOOKS', [100_000], 1);
  const processes = intList('BENCH_WEBHOOK_PROCESSES', [1, 2], 1);
  const settings = {
    durationSec: intList('BENCH_DURATION', [10], 1)[0] ?? 10,
    warmupSec: intList('BENCH_WARMUP', [2], 0)[0] ?? 2,
    shops: intList('BENCH_WEBHOOK_SHOPS', [16], 1)[0] ?? 16,
    perSubscription: intList('BENCH_WEBHOOK_PER_SUBSCRIPTION', [2], 1)[0] ?? 2,
    rate: intList('BENCH_WEBHOOK_RATE', [500], 0)[0] ?? 500,
  };
  // What the deliverers will read, as `kopek serve` would (checked here, so a typo fails at once).
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: DEFAULT_DB,
    KOPEK_MASTER_KEY: '0'.repeat(64),
  });
  const baseDbUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || DEFAULT_DB;
  const local = ['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(new URL(baseDbUrl).hostname);

  const cases = (process.env.BENCH_WEBHOOK_CASES || 'spread,backlog').split(',').map((c) => c.trim());
  for (const c of cases)
    if (c !== 'spread' && c !== 'backlog')
      throw new Error(`BENCH_WEBHOOK_CASES: "${c}" is neither spread nor backlog`);
  type Planned = { count: number; k: number; settings: Parameters<typeof runOne>[3] };
  const planned: Planned[] = [];
  if (cases.includes('spread'))
    for (const count of counts)
      for (const k of processes)
        planned.push({ count, k, settings: { ...settings, case: 'spread', statistics: 'collected' } });
  if (cases.includes('backlog')) {
    // One shop's backlog, as a receiver's outage leaves it: nothing new is written meanwhile.
    const count = intList('BENCH_WEBHOOK_BACKLOG', [100_000], 1)[0] ?? 100_000;
    for (const k of intList('BENCH_WEBHOOK_BACKLOG_PROCESSES', [2], 1))
      planned.push({
        count,
        k,
        settings: { ...settings, shops: 1, rate: 0, case: 'one-shop backlog', statistics: 'never' },
      });
  }

  // Seeding takes seconds; deliverers are given down to 50 notifications/s.
  const budgetSec = planned.reduce(
    (a, p) =>
      a + 180 + 4 * p.settings.durationSec + (p.count + p.settings.rate * p.settings.durationSec) / 50,
    0,
  );
  const { children, signal, done } = guardRun(budgetSec);

  const runs: WebhookRun[] = [];
  try {
    for (const p of planned) {
      const r = await runOne(baseDbUrl, p.count, p.k, p.settings, local, children, signal);
      runs.push(r);
      console.log(
        `  ratio ${r.ratio}; verified: ${r.verified.ok ? 'every notification delivered exactly once' : r.verified.problems.join('; ')}`,
      );
    }
  } finally {
    done();
  }

  const cpu = cpus();
  const report = {
    date: new Date().toISOString(),
    kopek: codeMeasured(),
    machine: {
      cpus: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      loadAverage: { start: loadAtStart, end: round(loadavg()[0] ?? 0, 2) },
    },
    settings: {
      ...settings,
      cases,
      backlogNotifications: planned.find((p) => p.settings.case === 'one-shop backlog')?.count ?? null,
      notifyConcurrency: config.notifyConcurrency,
      notifyShopConcurrency: config.notifyShopConcurrency,
      notifyIntervalMs: config.notifyIntervalMs,
      databasePoolSize: config.databasePoolSize,
      logLevel: process.env.BENCH_LOG_LEVEL || 'warn',
      synchronousCommit: process.env.BENCH_SYNCHRONOUS_COMMIT || 'server default',
    },
    goals: WEBHOOK_GOALS,
    runs,
  };
  console.log(`\n${formatRuns(runs)}\n`);
  console.log(
    'p50 / p99 from start: the backlog counts as created when delivery starts. Steady: from each notification’s created_at to its arrival.',
  );
  console.log(
    'RSS: of each delivering process when the run started, and the highest sampled during it (every 20 ms)',
  );
  console.log(
    'Machine: how busy both CPUs were, their CPU per delivery, and the share of their time used by anything but the deliverers, their backends and the receiver',
  );
  for (const r of runs) {
    const other = r.backlog.machine?.otherShare ?? 0;
    if (other > 0.15)
      console.log(
        `WARNING  ${r.notifications}×${r.processes}: ${Math.round(other * 100)} % of the CPUs' time went to other work during the run (another benchmark?): its deliveries/s are low`,
      );
  }
  for (const r of runs) {
    const ok = (met: boolean) => (met ? 'MET   ' : 'MISSED');
    console.log(
      `${ok(r.backlog.deliveriesPerSec >= WEBHOOK_GOALS.minPerSec && r.verified.ok)}  ${r.case}, ${r.notifications}×${r.processes}: deliveries/s ≥ ${WEBHOOK_GOALS.minPerSec}, none lost, none twice (measured ${r.backlog.deliveriesPerSec}/s; ${r.verified.ok ? 'verified' : 'NOT verified'})`,
    );
  }
  const first = runs[0];
  if (first) {
    console.log(
      `\nStatements per delivery (${first.notifications}×${first.processes}, backlog; ${first.backlog.transactionsPerDelivery} transactions per delivery):`,
    );
    for (const s of first.backlog.statements)
      console.log(`  ${s.perDelivery.toFixed(3).padStart(7)}  ${s.statement}`);
  }
  for (const r of runs) {
    if (!r.profile) continue;
    console.log(`\nWhere the deliverers' CPU went (${r.notifications}×${r.processes}, ${r.profile.file}):`);
    console.log(r.profile.text);
  }
  const { start, end } = report.machine.loadAverage;
  console.log(`\n${report.machine.cpus} CPUs, load average ${start} before and ${end} after the run`);
  console.log(`BENCH_JSON ${JSON.stringify(report)}`);
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'webhooks.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`Written to ${join('bench', 'results', 'webhooks.json')}`);

  const failed = runs.filter((r) => !r.verified.ok);
  if (failed.length > 0) {
    console.error(
      `\nFAILED: not every notification was delivered exactly once, so these figures say nothing:\n  ${failed
        .map((r) => `${r.notifications}×${r.processes}: ${r.verified.problems.join('; ')}`)
        .join('\n  ')}`,
    );
    return 1;
  }
  return 0;
}
