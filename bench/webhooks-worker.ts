/**
 * One process of the webhook benchmark, started by webhooks.ts with an IPC channel. It connects, says
 * `ready`, and on `go` runs one of:
 *
 * - `deliver`: the delivery loop as `kopek serve` runs it (startDelivery, its Services built the same
 *   way from the environment, NOTIFY_INTERVAL_MS, NOTIFY_CONCURRENCY and NOTIFY_SHOP_CONCURRENCY
 *   included, the Prometheus observer attached) until told to stop, reporting a lap whenever asked;
 *   it counts every statement it sends on the way;
 * - `baseline`: as many bare POST loops as NOTIFY_CONCURRENCY allows deliveries at once, each sending
 *   a notification's body and headers (made once) to the receiver through a keep-alive undici Agent
 *   like Kopek's, for the given seconds: no signing, no store, nothing but HTTP.
 */
import { Registry } from 'prom-client';
import { Agent, request } from 'undici';
import { buildServices } from '../src/compose/services.js';
import { loadConfig } from '../src/config.js';
import { closeNotificationAgents } from '../src/notifications/post.js';
import { notificationMetrics, startDelivery } from '../src/notifications/scheduler.js';
import { closeSigner } from '../src/notifications/signer.js';
import { DeliveryWake, wakingStore } from '../src/notifications/wake.js';
import type { FromWorker, ToWorker } from './webhooks-messages.js';
import * as kit from './worker-kit.js';
import { counting, meter } from './worker-kit.js';

const send: (m: FromWorker) => Promise<void> = kit.send;

/** Messages from the parent, in order, none lost between two waits. */
const inbox: ToWorker[] = [];
let waiting: ((m: ToWorker) => void) | undefined;
process.on('message', (m: ToWorker) => {
  if (waiting) {
    const w = waiting;
    waiting = undefined;
    w(m);
  } else inbox.push(m);
});
const next = (): Promise<ToWorker> => {
  const m = inbox.shift();
  if (m) return Promise.resolve(m);
  return new Promise((resolve) => {
    waiting = resolve;
  });
};

const hrMicros = () => Number(process.hrtime.bigint() / 1000n);

async function deliver(): Promise<void> {
  const config = loadConfig(process.env);
  if (!config.databaseUrl || !config.masterKey)
    throw new Error('DATABASE_URL and KOPEK_MASTER_KEY are required');
  let counted: ReturnType<typeof counting> | undefined;
  // Seen through a wake, as `kopek serve` sees its store (the benchmark writes its notifications from
  // another connection, so the wake never fires here: only its cost is measured), and a counter.
  const wake = new DeliveryWake();
  const { services } = await buildServices(config, {
    migrate: false,
    wrapStore: (db) => {
      counted = counting(db);
      return wakingStore(counted.db, wake);
    },
  });
  if (!counted) throw new Error('the store was not opened');
  const store = counted;
  const metrics = notificationMetrics(new Registry(), services);
  const outcomes = { delivered: 0, retry: 0, failed: 0 };
  const observer = {
    attempt(outcome: keyof typeof outcomes, seconds: number) {
      outcomes[outcome]++;
      metrics.attempt?.(outcome, seconds);
    },
  };
  // One connection opened before the clock starts, as a running server has.
  await store.db.query('SELECT 1');
  store.reset();
  await send({ type: 'ready' });
  if ((await next()).type !== 'go') throw new Error('expected go');
  let from = hrMicros();
  let done = meter();
  /** Reports the lap so far; unless it is the last, the next one starts. */
  const lap = async (last = false): Promise<void> => {
    const usage = done();
    const to = hrMicros();
    const result: FromWorker = {
      type: 'lap',
      ...usage,
      outcomes: { ...outcomes },
      statements: Object.fromEntries(store.statements),
      roundTrips: store.totals.roundTrips,
      transactions: store.totals.transactions,
      window: { from, to },
    };
    store.reset();
    outcomes.delivered = outcomes.retry = outcomes.failed = 0;
    from = to;
    // The meter samples RSS on a timer: a new one only while the run goes on.
    if (!last) done = meter();
    await send(result);
  };
  const stop = startDelivery(services, config.notifyIntervalMs, observer, wake);
  for (;;) {
    const m = await next();
    if (m.type === 'lap') await lap();
    else if (m.type === 'stop') {
      await stop();
      // The last lap: the process's connections stay open until `exit` (PostgreSQL's CPU is read per backend).
      const exit = next();
      await lap(true);
      if ((await exit).type !== 'exit') throw new Error('expected exit');
      break;
    } else throw new Error(`unexpected ${m.type}`);
  }
  // As `kopek serve` shuts down: the connections kept alive to receivers would hold the process.
  await closeNotificationAgents();
  await closeSigner();
  await store.db.close();
}

async function baseline(): Promise<void> {
  const config = loadConfig(process.env);
  const url = process.env.BENCH_RECEIVER_URL;
  const body = process.env.BENCH_BODY;
  if (!url || !body) throw new Error('BENCH_RECEIVER_URL and BENCH_BODY are required');
  const concurrency = config.notifyConcurrency;
  const agent = new Agent({ keepAliveTimeout: 4000 });
  // A notification's headers, of the same sizes; no event id, so the receiver only counts these.
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Kopek-Notifications/1',
    'content-signature': 'A'.repeat(344),
    'kopek-timestamp': String(Math.floor(Date.now() / 1000)),
    'kopek-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
  };
  let non2xx = 0;
  const post = async () => {
    const res = await request(url, { dispatcher: agent, method: 'POST', headers, body });
    await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
  };
  await send({ type: 'ready' });
  const go = await next();
  if (go.type !== 'go') throw new Error('expected go');
  const loops = (until: number, counter: { n: number }) =>
    Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < until) {
          await post();
          counter.n++;
        }
      }),
    );
  const warm = { n: 0 };
  await loops(performance.now() + (go.warmupSec ?? 0) * 1000, warm);
  const done = meter();
  const counted = { n: 0 };
  await loops(performance.now() + (go.durationSec ?? 10) * 1000, counted);
  const exit = next();
  await send({
    type: 'baseline-done',
    ...done(),
    posts: counted.n,
    allPosts: warm.n + counted.n,
    non2xx,
    concurrency,
  });
  await exit;
  await agent.close();
}

const mode = process.argv[2];
try {
  if (mode === 'deliver') await deliver();
  else if (mode === 'baseline') await baseline();
  else throw new Error(`unknown mode ${mode}: deliver or baseline`);
  process.disconnect?.();
} catch (err) {
  await send({
    type: 'failed',
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  }).catch(() => {});
  process.exitCode = 1;
  process.disconnect?.();
}
