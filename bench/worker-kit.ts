/**
 * What a benchmark's worker process needs, whatever it measures: its IPC with the parent (a message,
 * the next message, handing a result over while keeping its connections open), a meter of its run
 * (wall time, CPU, RSS) and a store that counts the statements sent through it.
 */
import { type Db, statementOf, type Tx } from '../src/db/db.js';
import type { Usage } from './renewals-messages.js';

export const send = (m: object) =>
  new Promise<void>((resolve, reject) => {
    if (!process.send)
      return reject(new Error('a benchmark worker runs under its benchmark, with an IPC channel'));
    process.send(m, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });

export const nextMessage = <T>() =>
  new Promise<T>((resolve) => {
    process.once('message', (m: T) => resolve(m));
  });

/**
 * Reports `result`, then keeps the process's connections open until the parent says `exit`: it reads
 * PostgreSQL's CPU time per backend from /proc, and a closed connection's backend is gone.
 */
export async function handOver(result: object): Promise<void> {
  const exit = nextMessage<{ type: 'exit' }>();
  await send(result);
  await exit;
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 102.4) / 10;

/** Measures a run: wall time, CPU, RSS sampled every 20 ms. */
export function meter(): () => Usage {
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
export function counting(db: Db) {
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
      alone(statementOf(sql).sql);
      return db.query(sql, params);
    },
    tx(fn) {
      totals.transactions++;
      alone('BEGIN');
      return db.tx(async (tx) => {
        const inner: Tx = {
          inTransaction: true,
          query(sql, params) {
            alone(statementOf(sql).sql);
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
    lockKey(space, key) {
      return db.lockKey(space, key);
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
