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
import { buildServices } from '../src/compose/services.js';
import { loadConfig } from '../src/config.js';
import type { FromWorker, Go } from './renewals-messages.js';
import * as kit from './worker-kit.js';
import { counting, meter, nextMessage } from './worker-kit.js';

// What this worker says is one of the renewal benchmark's messages.
const send: (m: FromWorker) => Promise<void> = kit.send;
const handOver: (m: FromWorker) => Promise<void> = kit.handOver;

async function engine(): Promise<void> {
  const config = loadConfig(process.env);
  if (!config.databaseUrl || !config.masterKey)
    throw new Error('DATABASE_URL and KOPEK_MASTER_KEY are required');
  let counted: ReturnType<typeof counting> | undefined;
  // Built as `kopek serve` builds them, on the seeded (migrated) store, which is seen through a counter.
  const { services } = await buildServices(config, {
    migrate: false,
    wrapStore: (db) => {
      counted = counting(db);
      return counted.db;
    },
  });
  if (!counted) throw new Error('the store was not opened');
  const store = counted;
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
