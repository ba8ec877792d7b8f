import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanUp,
  embeddedEnv,
  freePort,
  KOPEK,
  kopek,
  start,
  waitFor,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { type FreshStore, freshPostgres } from '../fresh-store.js';
import { type Receiver, startReceiver } from './receiver.js';

/**
 * Two `kopek serve` processes deliver the notifications of one PostgreSQL store at once: each
 * attempt is made by exactly one of them, a failed one is retried once, and a subscription's events
 * still arrive in order. PostgreSQL only: the embedded store belongs to one process.
 */

const pgUrl = process.env.DATABASE_URL;
let store: FreshStore | undefined;
let rx: Receiver | undefined;

/** A statement on the test's own store. */
async function sql<R>(text: string): Promise<R[]> {
  return (store as FreshStore).db.query<R>(text);
}

afterAll(async () => {
  cleanUp();
  await rx?.close();
  await store?.close();
});

const METRICS_TOKEN = 'processes-metrics-token-'.padEnd(40, '0');

function storeEnv(masterKey: string, port: number): NodeJS.ProcessEnv {
  const env = embeddedEnv('/nonexistent', port);
  Object.assign(env, {
    DATABASE_URL: (store as FreshStore).url,
    KOPEK_MASTER_KEY: masterKey,
    NOTIFY_INTERVAL_MS: '100',
    BILLING: 'off',
    METRICS_TOKEN,
    // The test shops' receiver is on loopback, reached on PostgreSQL within the operator's list.
    KOPEK_OUTBOUND_ALLOW: '127.0.0.1/32',
  });
  return env;
}

async function serve(masterKey: string) {
  const port = await freePort();
  const s = start(process.execPath, [...KOPEK, 'serve'], storeEnv(masterKey, port));
  await waitForBanner(s);
  return { ...s, base: `http://127.0.0.1:${port}` };
}

const deliveredBy = async (base: string): Promise<number> => {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const m = /kopek_notification_attempts_total\{outcome="delivered"\} (\d+)/.exec(text);
  return Number(m?.[1] ?? 0);
};

describe.skipIf(!pgUrl)('two kopek serve processes on PostgreSQL (set DATABASE_URL)', () => {
  it('never make one attempt twice, and keep each subscription in order', async () => {
    const seen = new Set<string>();
    // Slow enough that both processes have deliveries on their way at once; the first attempt at
    // each `created` fails, so retries are shared between the processes too.
    rx = await startReceiver((_i, r) => {
      const id = String(r.headers['kopek-event-id']);
      const fail = r.json.event === 'created.subscription' && !seen.has(id);
      seen.add(id);
      return { status: fail ? 500 : 200, delayMs: 30 };
    });
    store = await freshPostgres();
    const masterKey = randomBytes(32).toString('hex');
    // On PostgreSQL `kopek serve` makes no shop: one is made as an operator would, meanwhile.
    const [a, b, created] = await Promise.all([
      serve(masterKey),
      serve(masterKey),
      kopek(storeEnv(masterKey, 0), 'shop', 'create', '--test'),
    ]);
    expect(created.code, created.output).toBe(0);
    const shopId = /Shop id:\s+(\d+)/.exec(created.output)?.[1];
    const secret = /Secret key:\s+([0-9a-f]{64})/.exec(created.output)?.[1];
    const auth = `Basic ${Buffer.from(`${shopId}:${secret}`).toString('base64')}`;

    const N = 40;
    const subs = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await fetch(`${[a, b][i % 2]?.base}/subscriptions`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            plan: {
              title: 'Gold',
              currency: 'EUR',
              plan: { amount: 1999, interval: 1, interval_unit: 'month' },
            },
            customer: { email: `buyer${i}@example.com`, ip: '203.0.113.7' },
            card: {
              number: '4200000000000000',
              verification_value: '123',
              holder: 'JANE DOE',
              exp_month: '12',
              exp_year: '2030',
            },
            notification_url: rx?.url,
          }),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { id: string }).id;
      }),
    );

    const delivered = async () =>
      (
        await sql<{ n: number }>(
          `SELECT count(*)::int AS n FROM events e JOIN deliveries d ON d.event_id = e.id
           WHERE e.resource_type = 'subscription' AND d.status = 'delivered'`,
        )
      )[0]?.n;
    // A failed attempt is tried again 10 s later. Time passing is nothing but next_attempt_at coming
    // due, so each retry waiting for it is brought forward, without the wait. Only retries nobody
    // holds move: an attempt under way (leased) keeps its own schedule.
    const retriesDue = () =>
      sql(`UPDATE deliveries SET next_attempt_at = now()
           WHERE status = 'pending' AND attempts > 0 AND leased_until IS NULL AND next_attempt_at > now()`);
    await waitFor(
      'every notification delivered',
      async () => {
        await retriesDue();
        return (await delivered()) === 2 * N;
      },
      90_000,
    ).catch(async (err) => {
      const states = await sql(`SELECT e.event, d.status, d.attempts, count(*)
           FROM events e JOIN deliveries d ON d.event_id = e.id GROUP BY 1, 2, 3`);
      throw new Error(`${err}: ${JSON.stringify(states)}\n${a.output()}\n${b.output()}`);
    });
    expect(
      await sql(
        `SELECT 1 FROM events e JOIN deliveries d ON d.event_id = e.id
         WHERE e.resource_type = 'subscription' AND d.status IN ('pending', 'failed')`,
      ),
    ).toEqual([]);
    // Other events (a charge's transaction) may be notified too; these are the subscriptions'.
    const received = rx.received.filter((r) => String(r.json.event).endsWith('.subscription'));
    // Each `created` exactly twice (a 500, then a 200), each `activated` exactly once.
    const byEvent = new Map<string, number>();
    for (const r of received) {
      const id = String(r.headers['kopek-event-id']);
      byEvent.set(id, (byEvent.get(id) ?? 0) + 1);
    }
    expect(byEvent.size).toBe(2 * N);
    expect(received).toHaveLength(3 * N);
    const attempts = await sql<{ event_id: number; n: number; status_code: number }>(
      `SELECT a.event_id, a.n, a.status_code FROM event_attempts a JOIN events e ON e.id = a.event_id
       WHERE e.resource_type = 'subscription' ORDER BY a.event_id, a.n`,
    );
    expect(attempts).toHaveLength(3 * N);
    for (const [id, count] of byEvent) {
      const mine = attempts.filter((x) => `evt_${x.event_id}` === id);
      expect(mine.map((x) => x.n)).toEqual(count === 2 ? [1, 2] : [1]);
      expect(mine.at(-1)?.status_code).toBe(200);
    }
    // In order per subscription: `activated` is first sent after `created` got through.
    for (const sub of subs) {
      const mine = received
        .map((r, i) => ({ i, event: r.json.event }))
        .filter((_, i) => received[i]?.json.id === sub);
      expect(mine.map((m) => m.event)).toEqual([
        'created.subscription',
        'created.subscription',
        'activated.subscription',
      ]);
    }
    // Both processes delivered: otherwise this proved nothing about two of them.
    const byA = await deliveredBy(a.base);
    const byB = await deliveredBy(b.base);
    expect(byA + byB).toBeGreaterThanOrEqual(2 * N);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
  });
});
