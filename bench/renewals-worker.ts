/**
 * One process of the renewal benchmark, started by renewals.ts with an IPC channel. It connects, says
 * `ready`, and on `go` runs one of:
 *
 * - `engine`: the billing engine as `kopek serve` runs it (one `billDue` loop per process, its
 *   Services built the same way from the environment, the Prometheus observer attached) until
 *   nothing is due; it counts every statement it sends on the way;
 * - `baseline`: single-row INSERTs, one after the other on one connection, each its own transaction,
 *   for the given seconds: the yardstick of what one connection of this PostgreSQL commits per second.
 *
 * Then it reports what it did and what it used, and exits.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { billDue } from '../src/billing/renew.js';
import { billingMetrics } from '../src/billing/scheduler.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import type { Services } from '../src/context.js';
import type { Db, Tx } from '../src/db/db.js';
import { openDb } from '../src/db/open.js';
import { createLogger } from '../src/server.js';
import type { FromWorker, Go, Usage } from './renewals-messages.js';

const send = (m: FromWorker) =>
  new Promise<void>((resolve, reject) => {
    if (!process.send)
      return reject(new Error('renewals-worker runs under renewals.ts, with an IPC channel'));
    process.send(m, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });

const nextMessage = <T>() =>
  new Promise<T>((resolve) => {
    process.once('message', (m: T) => resolve(m));
  });

/**
 * Reports `result`, then keeps the process's connections open until the parent says `exit`: it reads
 * PostgreSQL's CPU time per backend from /proc, and a closed connection's backend is gone.
 */
async function handOver(result: FromWorker): Promise<void> {
  const exit = nextMessage<{ type: 'exit' }>();
  await send(result);
  await exit;
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10;

/** Measures a run: wall time, CPU, RSS sampled every 20 ms. */
function meter(): () => Usage {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const rssAtStart = process.memoryUsage.rss();
  let peak = rssAtStart;
  const timeline: number[] = [];
  let ticks = 0;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage.rss();
    peak = Math.max(peak, rss);
    if (++ticks % 50 === 0) timeline.push(mb(rss));
  }, 20);
  return () => {
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage.rss());
    const used = process.cpuUsage(cpu);
    return {
      ms: Math.round(performance.now() - started),
      cpuMs: Math.round((used.user + used.system) / 1000),
      // getrusage's ru_maxrss is in kilobytes.
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 102.4) / 10,
      rssAtStartMb: mb(rssAtStart),
      rssPeakRunMb: mb(peak),
      rssEverySecondMb: timeline,
      heapUsedMb: mb(process.memoryUsage().heapUsed),
    };
  };
}

const labels = new Map<string, string>();

/** A statement's label in the count: its first words, whitespace collapsed (made once per text). */
const labelOf = (sql: string) => {
  let label = labels.get(sql);
  if (label === undefined) {
    const flat = sql.replace(/\s+/g, ' ').trim();
    label = flat.length > 90 ? `${flat.slice(0, 90)}…` : flat;
    labels.set(sql, label);
  }
  return label;
};

/**
 * The store, counting what is sent through it: statements by text (a BEGIN and a COMMIT count as
 * statements), round trips (a statement alone, or a batch of them) and transactions.
 */
function counting(db: Db) {
  const statements = new Map<string, number>();
  const totals = { roundTrips: 0, transactions: 0 };
  const count = (sql: string) => {
    const label = labelOf(sql);
    statements.set(label, (statements.get(label) ?? 0) + 1);
  };
  const alone = (sql: string) => {
    totals.roundTrips++;
    count(sql);
  };
  const batched = (list: readonly { sql: string }[]) => {
    totals.roundTrips++;
    for (const st of list) count(st.sql);
  };
  const counted: Db = {
    kind: db.kind,
    query(sql, params) {
      alone(sql);
      return db.query(sql, params);
    },
    tx(fn) {
      totals.transactions++;
      alone('BEGIN');
      return db.tx(async (tx) => {
        const inner: Tx = {
          inTransaction: true,
          query(sql, params) {
            alone(sql);
            return tx.query(sql, params);
          },
          exec(sql) {
            alone(sql);
            return tx.exec(sql);
          },
          batch(list) {
            batched(list);
            return tx.batch(list);
          },
        };
        const result = await fn(inner);
        alone('COMMIT');
        return result;
      });
    },
    batch(list) {
      // A transaction of its own: BEGIN and COMMIT travel with the statements.
      totals.transactions++;
      batched(list);
      return db.batch(list);
    },
    close: () => db.close(),
  };
  const reset = () => {
    statements.clear();
    totals.roundTrips = 0;
    totals.transactions = 0;
  };
  return { db: counted, statements, totals, reset };
}

async function engine(): Promise<void> {
  const config = loadConfig(process.env);
  if (!config.databaseUrl || !config.masterKey)
    throw new Error('DATABASE_URL and KOPEK_MASTER_KEY are required');
  const log = createLogger(config);
  const store = counting(await openDb(config));
  const services: Services = { db: store.db, clock: systemClock, config, masterKey: config.masterKey, log };
  const observer = billingMetrics(new Registry(), services);
  const batch = Number(process.env.BENCH_RENEWAL_BATCH || 0);
  // One connection opened before the clock starts, as a running server has.
  await store.db.query('SELECT 1');
  store.reset();
  await send({ type: 'ready' });
  await nextMessage<Go>();
  const from = Number(process.hrtime.bigint() / 1000n);
  const done = meter();
  const summary = await billDue(services, { observer, ...(batch > 0 ? { batchSize: batch } : {}) });
  const usage = done();
  const to = Number(process.hrtime.bigint() / 1000n);
  await handOver({
    type: 'engine-done',
    ...usage,
    summary,
    statements: Object.fromEntries(store.statements),
    roundTrips: store.totals.roundTrips,
    transactions: store.totals.transactions,
    window: { from, to },
  });
  await store.db.close();
}

async function baseline(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const model = process.env.BENCH_BASELINE_MODEL;
  if (!url || !model) throw new Error('DATABASE_URL and BENCH_BASELINE_MODEL are required');
  // node-postgres's defaults, as the bare route of the HTTP benchmark uses them: unnamed statements.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The row to insert again and again: the ledger's payment row the model names, with a new uid.
    const { rows } = await client.query('SELECT * FROM transactions WHERE uid = $1', [model]);
    const row = rows[0] as Record<string, unknown> | undefined;
    if (!row) throw new Error(`no transaction ${model} to model the baseline's rows on`);
    const columns = Object.keys(row).filter((c) => c !== 'seq');
    const values = columns.map((c) => {
      const v = row[c];
      return v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;
    });
    const uidAt = columns.indexOf('uid');
    const sql = `INSERT INTO baseline_payments (${columns.join(', ')})
      VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`;
    const insert = () => {
      values[uidAt] = randomUUID();
      return client.query(sql, values);
    };
    await send({ type: 'ready' });
    const go = await nextMessage<Go>();
    const warmUntil = performance.now() + (go.warmupSec ?? 0) * 1000;
    let warm = 0;
    while (performance.now() < warmUntil) {
      await insert();
      warm++;
    }
    const done = meter();
    const until = performance.now() + (go.durationSec ?? 10) * 1000;
    let count = 0;
    while (performance.now() < until) {
      await insert();
      count++;
    }
    await handOver({ type: 'baseline-done', ...done(), rows: count, allRows: warm + count });
  } finally {
    await client.end();
  }
}

const mode = process.argv[2];
try {
  if (mode === 'engine') await engine();
  else if (mode === 'baseline') await baseline();
  else throw new Error(`unknown mode ${mode}: engine or baseline`);
  process.disconnect?.();
} catch (err) {
  await send({
    type: 'failed',
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  }).catch(() => {});
  process.exitCode = 1;
  process.disconnect?.();
}
