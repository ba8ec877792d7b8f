/**
 * `npm run soak` (or `npm run soak -- --ci`): Kopek as an operator runs it, watched through crashes.
 *
 * Three `kopek serve` processes on one fresh PostgreSQL database, behind a load balancer of its own
 * (a node:http proxy, round robin). All three serve, bill and deliver. For SOAK_SECONDS (600; the CI
 * variant 60) clients drive API traffic through the balancer at test shops: subscriptions created by
 * card (some declined), customers, reads, cancels and test-clock advances that make renewals fall
 * due; every POST carries an Idempotency-Key and is retried with it after a 5xx or a lost connection.
 * Notifications go to a receiver that fails a tenth of its requests. Meanwhile an instance chosen at
 * random is killed with SIGKILL every 20–60 s (10–20 s in the CI variant) and started again, and
 * once PostgreSQL itself is restarted (`pg_ctlcluster … restart`; SOAK_PG_RESTART=off skips it).
 *
 * Then the clocks move past every lease, the notifications are let through, and the store and the
 * receiver's log are asked: exactly one successful charge per subscription-period and none without
 * its record (the model's invariants, test/model/invariants.ts, per shop), nothing left open, every
 * notification delivered and accepted at least once, every idempotency key answered the same by all
 * three instances, no request lost (each got an answer, or a 5xx or a broken connection followed by
 * a retry that succeeded), no instance died but by the soak's own kills. It prints a table of what
 * it checked (and JSON to bench/results/), and exits non-zero when a check fails.
 *
 * Settings: SOAK_SECONDS, SOAK_SHOPS (4; CI 2), SOAK_CLIENTS (6; CI 4), SOAK_KILL_EVERY (seconds,
 * "20-60"; CI "10-20"), SOAK_FAIL_RATE (0.1), SOAK_PG_RESTART (on), SOAK_DATABASE_URL (the server,
 * default postgres://postgres@127.0.0.1:5432/postgres: a database of its own is created and dropped),
 * SOAK_PG_CLUSTER (the cluster of that server that is restarted, `15/main`: `pg_ctlcluster` names),
 * BENCH_VERBOSE=1 echoes the instances' output.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { installInvariants, leftOpen, violations } from '../test/model/invariants.js';
import { type Child, freePort, ROOT, startKopek, waitForHealth } from './processes.js';

const CI = process.argv.includes('--ci');

function setting(name: string, fallback: string): string {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
}
function intSetting(name: string, fallback: number): number {
  const n = Number(setting(name, String(fallback)));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number ≥ 1`);
  return n;
}

const SECONDS = intSetting('SOAK_SECONDS', CI ? 60 : 600);
const SHOPS = intSetting('SOAK_SHOPS', CI ? 2 : 4);
const CLIENTS = intSetting('SOAK_CLIENTS', CI ? 4 : 6);
const [KILL_MIN, KILL_MAX] = setting('SOAK_KILL_EVERY', CI ? '10-20' : '20-60')
  .split('-')
  .map(Number) as [number, number];
const FAIL_RATE = Number(setting('SOAK_FAIL_RATE', '0.1'));
const PG_RESTART = setting('SOAK_PG_RESTART', 'on') !== 'off';
const SERVER_URL = setting('SOAK_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres');
const INSTANCES = 3;
/** How long a client goes on retrying one request (an instance restarts in a few seconds). */
const RETRY_FOR_MS = 90_000;

const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

// ---------------------------------------------------------------------------------------------
// The store

async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function databaseUrl(name: string): string {
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * `pg_ctlcluster <version> <cluster> restart`, as the machine's PostgreSQL is run: SOAK_PG_CLUSTER
 * ("15/main"), by default the first version's `main`, the cluster at 127.0.0.1:5432.
 */
function restartPostgres(): void {
  const [version, cluster] = setting('SOAK_PG_CLUSTER', `${readdirSync('/etc/postgresql')[0]}/main`).split(
    '/',
  );
  if (!version || !cluster) throw new Error('SOAK_PG_CLUSTER must be <version>/<cluster>, e.g. 15/main');
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, cluster, 'restart'], {
    stdio: 'ignore',
  });
}

// ---------------------------------------------------------------------------------------------
// Instances and the load balancer

interface Instance {
  n: number;
  port: number;
  child: Child;
  /** Set when the soak killed it on purpose. */
  killed: boolean;
  starts: number;
}

const unexpectedExits: string[] = [];

/** `kopek …` as an operator runs it (processes.ts: startKopek, with the flags of `npm start`). */
const kopek = (args: string[], env: NodeJS.ProcessEnv, name: string): Child => startKopek(name, args, env);

async function startInstance(inst: Instance, env: NodeJS.ProcessEnv): Promise<void> {
  inst.killed = false;
  inst.starts++;
  const child = kopek(['serve'], { ...env, PORT: String(inst.port), HOST: '127.0.0.1' }, `kopek-${inst.n}`);
  inst.child = child;
  void child.exited.then((code) => {
    if (!inst.killed && inst.child === child && !stopping)
      unexpectedExits.push(`instance ${inst.n} exited with ${code}:\n${child.tail.slice(-15).join('\n')}`);
  });
  await waitForHealth(child, `http://127.0.0.1:${inst.port}/health`, 120_000, AbortSignal.timeout(125_000));
}

let stopping = false;

/** Round robin over the instances; a request whose instance is down answers 502 (the client retries). */
function startBalancer(instances: Instance[]): Promise<{ server: Server; url: string }> {
  let next = 0;
  const server = createServer((req, res) => {
    const inst = instances[next++ % instances.length] as Instance;
    const out = httpRequest(
      { host: '127.0.0.1', port: inst.port, method: req.method, path: req.url, headers: req.headers },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    out.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"message":"the instance is unreachable"}');
      } else res.destroy();
    });
    req.pipe(out);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// The receiver

interface ReceiverLog {
  requests: number;
  failedOnPurpose: number;
  /** Accepted (2xx) deliveries by event id. */
  accepted: Map<number, number>;
}

function startReceiver(): Promise<{ server: Server; url: string; log: ReceiverLog }> {
  const log: ReceiverLog = { requests: 0, failedOnPurpose: 0, accepted: new Map() };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      log.requests++;
      const id = /^evt_(\d+)$/.exec(String(req.headers['kopek-event-id'] ?? ''))?.[1];
      if (Math.random() < FAIL_RATE) {
        log.failedOnPurpose++;
        res.writeHead(500).end();
        return;
      }
      if (id) log.accepted.set(Number(id), (log.accepted.get(Number(id)) ?? 0) + 1);
      res.writeHead(200).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, log }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Clients

interface Shop {
  id: number;
  auth: string;
  subscriptions: string[];
}

interface Keyed {
  path: string;
  body: string;
  auth: string;
  status: number;
  text: string;
}

const requests = { sent: 0, answeredAtOnce: 0, retriedThenAnswered: 0, lost: 0, attempts: 0, fiveXx: 0 };
/** Milliseconds from a request's first send to its answer (retries included), by kind. */
const latencies = new Map<string, number[]>();
const lostRequests: string[] = [];
const keyed = new Map<string, Keyed>();

/** An answer that is final: not a 5xx, not the 409 of a key whose first request is still running. */
const final = (status: number) => status < 500 && status !== 409;

async function call(
  base: string,
  shop: Shop,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown } | undefined> {
  requests.sent++;
  const began = performance.now();
  const kind = `${method} ${path.replace(/sbs_[0-9A-Za-z]+/, ':id').replace(/\?.*$/, '')}`;
  const key = method === 'POST' ? `soak-${randomBytes(12).toString('hex')}` : undefined;
  const text = body === undefined ? undefined : JSON.stringify(body);
  const deadline = Date.now() + RETRY_FOR_MS;
  let failures = 0;
  let lastTrouble = '';
  while (Date.now() < deadline) {
    requests.attempts++;
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: shop.auth,
          ...(text ? { 'content-type': 'application/json' } : {}),
          ...(key ? { 'idempotency-key': key } : {}),
        },
        ...(text ? { body: text } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      const answer = await res.text();
      if (final(res.status)) {
        if (failures === 0) requests.answeredAtOnce++;
        else requests.retriedThenAnswered++;
        const took = latencies.get(kind) ?? [];
        took.push(performance.now() - began);
        latencies.set(kind, took);
        if (key)
          keyed.set(key, { path, body: text ?? '', auth: shop.auth, status: res.status, text: answer });
        return { status: res.status, json: answer ? JSON.parse(answer) : undefined };
      }
      if (res.status >= 500) requests.fiveXx++;
      lastTrouble = `${res.status} ${answer.slice(0, 200)}`;
    } catch (err) {
      lastTrouble = (err as Error).message;
    }
    failures++;
    await sleep(100 + randomInt(400));
  }
  requests.lost++;
  lostRequests.push(`${method} ${path}: ${lastTrouble}`);
  return undefined;
}

const CARDS = ['4200000000000000', '4200000000000000', '4200000000000000', '4005550000000019'];

function subscriptionBody(notificationUrl: string) {
  const daily = Math.random() < 0.5;
  return {
    plan: {
      title: daily ? 'Soak daily' : 'Soak monthly',
      currency: 'EUR',
      plan: daily
        ? { amount: 499, interval: 1, interval_unit: 'day' }
        : { amount: 1999, interval: 1, interval_unit: 'month' },
    },
    customer: { email: 'soak@example.com', ip: '203.0.113.7' },
    card: {
      number: CARDS[randomInt(CARDS.length)],
      verification_value: '123',
      holder: 'SOAK TEST',
      exp_month: '12',
      exp_year: '2040',
    },
    notification_url: notificationUrl,
  };
}

async function client(base: string, shops: Shop[], notificationUrl: string, until: number): Promise<void> {
  while (Date.now() < until) {
    const shop = shops[randomInt(shops.length)] as Shop;
    const roll = Math.random();
    const known = shop.subscriptions[randomInt(Math.max(shop.subscriptions.length, 1))];
    if (roll < 0.35) {
      const r = await call(base, shop, 'POST', '/subscriptions', subscriptionBody(notificationUrl));
      const id = (r?.json as { id?: string } | undefined)?.id;
      if (r?.status === 201 && id) shop.subscriptions.push(id);
    } else if (roll < 0.5) {
      await call(base, shop, 'POST', '/customers', {
        email: `c${randomInt(1e9)}@example.com`,
        first_name: 'Soak',
      });
    } else if (roll < 0.75 && known) {
      await call(base, shop, 'GET', `/subscriptions/${known}`);
    } else if (roll < 0.82) {
      await call(base, shop, 'GET', '/subscriptions?limit=20');
    } else if (roll < 0.87 && known) {
      await call(base, shop, 'POST', `/subscriptions/${known}/cancel`, { cancel_reason: 'Soak test' });
    } else {
      const by = ['PT6H', 'PT12H', 'P1D', 'P2D'][randomInt(4)];
      await call(base, shop, 'POST', '/test_clock/advance', { by });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The run

interface Check {
  check: string;
  ok: boolean;
  detail: string;
}

async function main(): Promise<void> {
  const dbName = `kopek_soak_${randomBytes(4).toString('hex')}`;
  await admin(SERVER_URL, (c) => c.query(`CREATE DATABASE ${dbName}`));
  const url = databaseUrl(dbName);
  const masterKey = randomBytes(32).toString('hex');
  const receiver = await startReceiver();
  const instances: Instance[] = [];
  for (let n = 1; n <= INSTANCES; n++)
    instances.push({
      n,
      port: await freePort(),
      child: undefined as unknown as Child,
      killed: false,
      starts: 0,
    });
  const balancer = await startBalancer(instances);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: url,
    KOPEK_MASTER_KEY: masterKey,
    PUBLIC_URL: balancer.url,
    LOG_LEVEL: 'warn',
    BILLING: 'on',
    BILLING_INTERVAL_MS: '250',
    NOTIFY_INTERVAL_MS: '250',
    KOPEK_OUTBOUND_ALLOW: '127.0.0.1/32',
  };
  for (const name of ['GATEWAY_URL', 'CHECKOUT_URL', 'GATEWAY_TOKEN', 'DATA_DIR', 'NODE_OPTIONS'])
    delete env[name];
  const checks: Check[] = [];
  const started = performance.now();
  let pgRestarted = false;
  let kills = 0;
  try {
    // One-shot migration (and the build, when the sources are newer), then the shops.
    const migrate = kopek(['migrate'], env, 'migrate');
    if ((await migrate.exited) !== 0) throw new Error(`migrate failed:\n${migrate.tail.join('\n')}`);
    const shops: Shop[] = [];
    for (let i = 1; i <= SHOPS; i++) {
      const secret = randomBytes(32).toString('hex');
      const create = kopek(
        ['shop', 'create', '--id', String(i), '--secret', secret, '--test', '--name', `Soak ${i}`],
        env,
        'shop',
      );
      if ((await create.exited) !== 0) throw new Error(`shop create failed:\n${create.tail.join('\n')}`);
      shops.push({
        id: i,
        auth: `Basic ${Buffer.from(`${i}:${secret}`).toString('base64')}`,
        subscriptions: [],
      });
    }
    await Promise.all(instances.map((inst) => startInstance(inst, env)));
    log(`${INSTANCES} instances up behind ${balancer.url}; ${SHOPS} test shops; ${SECONDS} s of traffic`);

    const until = Date.now() + SECONDS * 1000;
    const clients = Array.from({ length: CLIENTS }, () => client(balancer.url, shops, receiver.url, until));

    // Chaos: kill -9 an instance now and then and start it again; PostgreSQL restarted once.
    const chaos = (async () => {
      const pgAt = Date.now() + (SECONDS * 1000) / 2;
      let nextKill = Date.now() + (KILL_MIN + Math.random() * (KILL_MAX - KILL_MIN)) * 1000;
      while (Date.now() < until) {
        await sleep(250);
        if (PG_RESTART && !pgRestarted && Date.now() >= pgAt) {
          log('restarting PostgreSQL');
          restartPostgres();
          pgRestarted = true;
        }
        if (Date.now() < nextKill || Date.now() >= until) continue;
        const inst = instances[randomInt(INSTANCES)] as Instance;
        inst.killed = true;
        inst.child.proc.kill('SIGKILL');
        await inst.child.exited;
        kills++;
        log(`killed instance ${inst.n} (kill ${kills})`);
        await sleep(500 + randomInt(1500));
        await startInstance(inst, env);
        log(`instance ${inst.n} is back`);
        nextKill = Date.now() + (KILL_MIN + Math.random() * (KILL_MAX - KILL_MIN)) * 1000;
      }
    })();
    await Promise.all([...clients, chaos]);
    log(`traffic over: ${requests.sent} requests, ${kills} kills`);

    // Settling: past every lease (five minutes on the shop's clock), then the notifications through.
    const advancing = Date.now();
    for (const shop of shops) {
      for (const by of ['PT10M', 'PT10M', 'PT1H'])
        await call(balancer.url, shop, 'POST', '/test_clock/advance', { by });
    }
    log(`clocks past every lease in ${((Date.now() - advancing) / 1000).toFixed(1)} s`);
    const db = new pg.Pool({ connectionString: url, max: 2 });
    try {
      // Per shop: notifications pending, and how long (on the shop's clock) until the first of them a
      // deliverer could take is due: not held by one, and first in its resource's order (a later one
      // waits for it, due or not: the claim's own rule, src/notifications/queue.ts); 0 or less when one
      // is due now, null when none can be taken.
      const pendingByShop = async () =>
        (
          await db.query<{ shop_id: number; pending: number; wait_s: number | null }>(
            `SELECT d.shop_id, count(*)::int AS pending,
               min(extract(epoch FROM d.next_attempt_at - (now() + sh.clock_offset_ms * interval '1 millisecond')))
                 FILTER (WHERE (d.leased_until IS NULL OR d.leased_until <= now())
                   AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.status = 'pending'
                     AND p.resource_id = d.resource_id AND p.event_id < d.event_id AND p.shop_id = d.shop_id)
                 )::float8 AS wait_s
             FROM deliveries d JOIN shops sh ON sh.id = d.shop_id
             WHERE d.status = 'pending' GROUP BY d.shop_id`,
          )
        ).rows;
      const settleFrom = Date.now();
      const settleUntil = settleFrom + 120_000;
      let lastLog = 0;
      for (;;) {
        const shopsPending = await pendingByShop();
        const pending = shopsPending.reduce((n, r) => n + r.pending, 0);
        if (pending === 0 || Date.now() >= settleUntil) {
          log(
            `settled: ${pending} notifications pending after ${((Date.now() - settleFrom) / 1000).toFixed(1)} s`,
          );
          break;
        }
        if (Date.now() - lastLog >= 5000) {
          log(`settling: ${pending} notifications pending`);
          lastLog = Date.now();
        }
        // A failed notification's next attempt is due on its shop's clock. A shop whose pending
        // notifications all wait for a later attempt has its clock moved to the first of them, and
        // no further: a longer move would make renewals fall due, and with them new notifications.
        for (const r of shopsPending) {
          const shop = shops.find((s) => s.id === r.shop_id);
          if (shop && r.wait_s !== null && r.wait_s > 0)
            await call(balancer.url, shop, 'POST', '/test_clock/advance', {
              by: `PT${Math.ceil(r.wait_s) + 1}S`,
            });
        }
        await sleep(200);
      }
      stopping = true;

      // What the store and the receiver say.
      const queryable = {
        query: async <T>(text: string, params?: unknown[]) => (await db.query(text, params)).rows as T[],
      };
      await installInvariants(queryable as never);
      const broken: string[] = [];
      const open: string[] = [];
      for (const shop of shops) {
        for (const v of await violations(queryable as never, shop.id)) broken.push(`${v.check} ${v.v}`);
        const [clock] = (
          await db.query<{ now: Date }>(
            `SELECT now() + clock_offset_ms * interval '1 millisecond' - interval '6 minutes' AS now
             FROM shops WHERE id = $1`,
            [shop.id],
          )
        ).rows;
        for (const v of await leftOpen(queryable as never, shop.id, clock?.now ?? new Date()))
          open.push(`${v.check} ${v.v}`);
      }
      const money = (
        await db.query<{ subscriptions: number; payments: number; periods: number }>(
          `SELECT (SELECT count(*)::int FROM subscriptions) AS subscriptions,
             (SELECT count(*)::int FROM transactions WHERE type = 'payment' AND status = 'successful') AS payments,
             (SELECT count(*)::int FROM subscription_charges WHERE status = 'successful') AS periods`,
        )
      ).rows[0];
      checks.push({
        check: 'one successful charge per subscription-period, each with its record (invariants a–d)',
        ok: broken.length === 0,
        detail:
          broken.length === 0
            ? `${money?.subscriptions} subscriptions, ${money?.payments} payments, ${money?.periods} paid periods`
            : broken.slice(0, 10).join('\n'),
      });
      checks.push({
        check: 'no charge attempt left open once every lease has run out (invariant e)',
        ok: open.length === 0,
        detail: open.length === 0 ? 'none open' : open.slice(0, 10).join('\n'),
      });

      const deliveries = (
        await db.query<{ event_id: string; status: string }>(`SELECT event_id::text, status FROM deliveries`)
      ).rows;
      const undelivered = deliveries.filter((d) => d.status !== 'delivered');
      const unaccepted = deliveries.filter((d) => !receiver.log.accepted.has(Number(d.event_id)));
      const twice = [...receiver.log.accepted.values()].filter((n) => n > 1).length;
      checks.push({
        check: 'every notification delivered, and accepted by the receiver at least once',
        ok: deliveries.length > 0 && undelivered.length === 0 && unaccepted.length === 0,
        detail:
          `${deliveries.length} notifications, ${receiver.log.requests} requests (${receiver.log.failedOnPurpose} failed on purpose), ` +
          `${undelivered.length} not delivered, ${unaccepted.length} never accepted, ${twice} accepted more than once (its event id tells the shop)`,
      });

      // Every keyed request asked again of every instance: the same answer, byte for byte.
      let replays = 0;
      const differing: string[] = [];
      for (const [key, k] of keyed) {
        for (const inst of instances) {
          replays++;
          const res = await fetch(`http://127.0.0.1:${inst.port}${k.path}`, {
            method: 'POST',
            headers: { authorization: k.auth, 'content-type': 'application/json', 'idempotency-key': key },
            body: k.body,
          });
          const text = await res.text();
          if (res.status !== k.status || text !== k.text)
            differing.push(`${key} ${k.path} on instance ${inst.n}: ${k.status} then ${res.status}`);
        }
      }
      checks.push({
        check: 'every idempotency key answered the same by every instance',
        ok: differing.length === 0 && keyed.size > 0,
        detail: `${keyed.size} keys × ${INSTANCES} instances = ${replays} replays, ${differing.length} differed${differing.length ? `:\n${differing.slice(0, 5).join('\n')}` : ''}`,
      });
      checks.push({
        check: 'no request lost: an answer, or a 5xx / broken connection and a retry that succeeded',
        ok: requests.lost === 0,
        detail: `${requests.sent} requests: ${requests.answeredAtOnce} answered at once, ${requests.retriedThenAnswered} after a retry (${requests.fiveXx} 5xx seen), ${requests.lost} lost${lostRequests.length ? `:\n${lostRequests.slice(0, 5).join('\n')}` : ''}`,
      });
      checks.push({
        check: 'no instance died but by the soak’s kills',
        ok: unexpectedExits.length === 0,
        detail: `${kills} kills, ${instances.map((i) => `instance ${i.n} started ${i.starts}×`).join(', ')}${unexpectedExits.length ? `\n${unexpectedExits.join('\n')}` : ''}`,
      });
      checks.push({
        check: 'PostgreSQL restarted under load',
        ok: !PG_RESTART || pgRestarted,
        detail: PG_RESTART ? (pgRestarted ? 'once, mid-run' : 'not done') : 'skipped (SOAK_PG_RESTART=off)',
      });
    } finally {
      await db.end();
    }
  } finally {
    stopping = true;
    await Promise.all(
      instances.map(async (inst) => {
        if (!inst.child) return;
        inst.child.proc.kill('SIGTERM');
        const t = setTimeout(() => inst.child.proc.kill('SIGKILL'), 10_000);
        await inst.child.exited;
        clearTimeout(t);
      }),
    );
    balancer.server.close();
    receiver.server.close();
    await admin(SERVER_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).catch(() => {});
  }

  const seconds = Math.round((performance.now() - started) / 1000);
  const width = Math.max(...checks.map((c) => c.check.length));
  console.log(
    `\nSoak: ${SECONDS} s of traffic, ${INSTANCES} instances, ${SHOPS} shops, ${kills} kills, ${seconds} s in all`,
  );
  for (const c of checks) {
    console.log(`${c.ok ? 'PASS' : 'FAIL'}  ${c.check.padEnd(width)}  ${c.detail.split('\n')[0]}`);
    for (const more of c.detail.split('\n').slice(1)) console.log(`      ${''.padEnd(width)}  ${more}`);
  }
  const pct = (xs: number[], p: number) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
  };
  const traffic = [...latencies].map(([kind, xs]) => ({
    kind,
    count: xs.length,
    p50Ms: pct(xs, 50),
    p99Ms: pct(xs, 99),
    maxMs: Math.round(Math.max(...xs)),
  }));
  console.log(
    `\nTraffic: ${requests.sent} requests in ${SECONDS} s (${(requests.sent / SECONDS).toFixed(1)}/s), retries included in the times`,
  );
  console.log(
    `${'request'.padEnd(34)} ${'count'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'max ms'.padStart(7)}`,
  );
  for (const t of traffic.sort((a, b) => b.count - a.count))
    console.log(
      `${t.kind.padEnd(34)} ${String(t.count).padStart(6)} ${String(t.p50Ms).padStart(7)} ${String(t.p99Ms).padStart(7)} ${String(t.maxMs).padStart(7)}`,
    );
  const results = join(ROOT, 'bench/results');
  mkdirSync(results, { recursive: true });
  const file = join(results, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ seconds: SECONDS, instances: INSTANCES, shops: SHOPS, clients: CLIENTS, kills, pgRestarted, requests, traffic, checks }, null, 2)}\n`,
  );
  console.log(`\n${file}`);
  if (checks.some((c) => !c.ok)) process.exitCode = 1;
}

await main();
