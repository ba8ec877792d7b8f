import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createPgliteDb } from '../../src/db/pglite.js';
import { createShop } from '../../src/shops/service.js';
import { type FreshStore, freshPostgres, seedPgliteDir } from '../fresh-store.js';
import { KOPEK, start } from './kopek-process.js';

/**
 * A real server is killed (SIGKILL) in the middle of a burst of card subscriptions, each sent with
 * its own Idempotency-Key; after a restart every request is retried with its key. Every answer must
 * then name a subscription that exists, none may be 409, and no card may be charged twice. Runs on
 * the store of the test run: PostgreSQL when DATABASE_URL is set, the embedded store otherwise.
 */

const BURST = 200;
const KILL_AFTER_ANSWERS = 20;
const pgUrl = process.env.DATABASE_URL;

let dataDir: string;
let store: FreshStore | undefined;
const masterKey = randomBytes(32).toString('hex');
let server: ChildProcess | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function storeUrl(): string | undefined {
  return store?.url;
}

interface Started {
  child: ChildProcess;
  base: string;
  output: () => string;
}

function serverEnv(port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    KOPEK_MASTER_KEY: masterKey,
    LOG_LEVEL: 'warn',
  };
  delete env.NODE_OPTIONS;
  const url = storeUrl();
  if (url) env.DATABASE_URL = url;
  else delete env.DATABASE_URL;
  return env;
}

/**
 * The shop the test works as: the sandbox shop the first start of the embedded store makes, or on
 * PostgreSQL (where `kopek serve` makes none) one made in the store, as `kopek shop create` makes it.
 */
async function shopOf(first: Started): Promise<{ shopId?: string; secret?: string }> {
  if (store) {
    const { shop, secret } = await createShop(
      { db: store.db, clock: systemClock, masterKey: Buffer.from(masterKey, 'hex') },
      { test: true },
    );
    return { shopId: String(shop.id), secret };
  }
  const text = first.output();
  return {
    shopId: /Shop id:\s+(\d+)/.exec(text)?.[1],
    secret: /Secret key:\s+([0-9a-f]+)/.exec(text)?.[1],
  };
}

async function startServer(port: number): Promise<Started> {
  const started = start(process.execPath, [...KOPEK, 'serve'], serverEnv(port));
  server = started.child;
  // Ready once it says so (and, on a first start, has printed the sandbox shop).
  await started.untilOutput(
    'the server to be ready',
    (out) =>
      out.includes('Kopek is running') && (!out.includes('Created a sandbox') || out.includes('Try it')),
  );
  return { child: started.child, base: `http://127.0.0.1:${port}`, output: started.output };
}

function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

const body = (i: number) =>
  JSON.stringify({
    plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
    customer: { email: `buyer${i}@example.com`, ip: '203.0.113.7' },
    card: {
      number: '4200000000000000',
      verification_value: '123',
      holder: 'JANE DOE',
      exp_month: '12',
      exp_year: '2030',
    },
    tracking_id: `crash-${i}`,
  });

interface Answer {
  status: number;
  text: string;
}

async function send(base: string, auth: string, i: number): Promise<Answer> {
  const res = await fetch(`${base}/subscriptions`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json', 'idempotency-key': `crash-key-${i}` },
    body: body(i),
  });
  return { status: res.status, text: await res.text() };
}

interface Charged {
  id: string;
  tracking_id: string;
  payments: number;
}

/**
 * Each subscription of the run with its count of successful payments, and every successful payment
 * of the store, read from the store itself.
 */
async function chargedSubscriptions(): Promise<{ subscriptions: Charged[]; payments: number }> {
  const all = `SELECT count(*)::int AS n FROM transactions WHERE type = 'payment' AND status = 'successful'`;
  const sql = `SELECT s.id, s.tracking_id,
      (SELECT count(*)::int FROM transactions t
        WHERE t.shop_id = s.shop_id AND t.type = 'payment' AND t.status = 'successful'
          AND t.tracking_id LIKE s.id || '-%') AS payments
    FROM subscriptions s WHERE s.tracking_id LIKE 'crash-%' ORDER BY s.tracking_id`;
  if (store) {
    const subscriptions = await store.db.query<Charged>(sql);
    return { subscriptions, payments: (await store.db.query<{ n: number }>(all))[0]?.n ?? 0 };
  }
  // The server has stopped: its embedded store can be opened here.
  const lite = await createPgliteDb(join(dataDir, 'pglite'));
  try {
    const subscriptions = await lite.query<Charged>(sql);
    return { subscriptions, payments: (await lite.query<{ n: number }>(all))[0]?.n ?? 0 };
  } finally {
    await lite.close();
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'kopek-crash-'));
  // A store as a first start has migrated it: the test is about the crash, not the first start.
  if (pgUrl) store = await freshPostgres();
  else await seedPgliteDir(join(dataDir, 'pglite'));
});

afterAll(async () => {
  if (server) await kill(server, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  await store?.close();
});

describe('Idempotency-Key across a crash', () => {
  it('after SIGKILL mid-burst, every retry with its key answers a stored subscription, charged once', async () => {
    const port = await freePort();
    const first = await startServer(port);
    const { shopId, secret } = await shopOf(first);
    expect(shopId && secret, first.output()).toBeTruthy();
    const auth = `Basic ${Buffer.from(`${shopId}:${secret}`).toString('base64')}`;

    // The burst: the server is killed once a few answers are back and the rest are in flight.
    const answered = new Map<number, Answer>();
    let killed: Promise<void> | undefined;
    await Promise.allSettled(
      Array.from({ length: BURST }, (_, i) =>
        send(first.base, auth, i).then((a) => {
          if (killed) return;
          answered.set(i, a);
          if (answered.size >= KILL_AFTER_ANSWERS) killed = kill(first.child, 'SIGKILL');
        }),
      ),
    );
    await (killed ?? kill(first.child, 'SIGKILL'));
    expect(answered.size).toBeGreaterThan(0);
    expect(answered.size).toBeLessThan(BURST);
    for (const a of answered.values()) expect(a.status, a.text).toBe(201);

    const second = await startServer(port);
    const retried = new Map<number, Answer>();
    for (let from = 0; from < BURST; from += 20) {
      const batch = Array.from({ length: Math.min(20, BURST - from) }, (_, k) => from + k);
      const answers = await Promise.all(batch.map((i) => send(second.base, auth, i)));
      for (const [k, i] of batch.entries()) retried.set(i, answers[k] as Answer);
    }
    await kill(second.child, 'SIGTERM');

    // No retry is told "still running"; an answer given before the crash is given again, unchanged.
    for (const [i, a] of retried) {
      expect(a.status, `request ${i}: ${a.text}`).toBe(201);
      const before = answered.get(i);
      if (before) expect(a.text).toBe(before.text);
    }
    // Every request made exactly one subscription, the one its answer names, charged exactly once.
    const { subscriptions: charged, payments } = await chargedSubscriptions();
    expect(charged).toHaveLength(BURST);
    expect(payments).toBe(BURST);
    const byTracking = new Map(charged.map((c) => [c.tracking_id, c]));
    for (const [i, a] of retried) {
      const stored = byTracking.get(`crash-${i}`);
      expect(stored?.id).toBe(JSON.parse(a.text).id);
      expect(stored?.payments).toBe(1);
    }
  });
});
