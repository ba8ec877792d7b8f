import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { type FreshStore, freshPostgres } from '../fresh-store.js';
import { cleanUp, embeddedEnv, freePort, KOPEK, kopek, start, waitForBanner } from './kopek-process.js';

/**
 * Two `kopek serve` processes on one PostgreSQL spend one budget per shop, counted in PostgreSQL, or
 * in Redis when REDIS_URL is set. PostgreSQL only: the embedded store belongs to one process.
 */

const pgUrl = process.env.DATABASE_URL;
const REDIS_URL = 'redis://127.0.0.1:6379';
const stores: FreshStore[] = [];

afterAll(async () => {
  cleanUp();
  await Promise.all(stores.map((s) => s.close()));
});

async function pair(extra: NodeJS.ProcessEnv) {
  const store = await freshPostgres();
  stores.push(store);
  const masterKey = randomBytes(32).toString('hex');
  const envOf = (port: number): NodeJS.ProcessEnv => ({
    ...embeddedEnv('/nonexistent', port),
    DATABASE_URL: store.url,
    KOPEK_MASTER_KEY: masterKey,
    BILLING: 'off',
    NOTIFICATIONS: 'off',
    // A window far longer than the test, so that wall time cannot renew it midway.
    API_RATE_LIMIT: '6',
    API_RATE_WINDOW: '3600',
    ...extra,
  });
  const serve = async () => {
    const port = await freePort();
    const s = start(process.execPath, [...KOPEK, 'serve'], envOf(port));
    await waitForBanner(s);
    return `http://127.0.0.1:${port}`;
  };
  const [a, b, created] = await Promise.all([serve(), serve(), kopek(envOf(0), 'shop', 'create', '--test')]);
  expect(created.code, created.output).toBe(0);
  const shopId = /Shop id:\s+(\d+)/.exec(created.output)?.[1];
  const secret = /Secret key:\s+([0-9a-f]{64})/.exec(created.output)?.[1];
  return { bases: [a, b], auth: `Basic ${Buffer.from(`${shopId}:${secret}`).toString('base64')}`, store };
}

/** Six requests between the two processes, then 429 with Retry-After on both. */
async function spendsOneBudget(bases: string[], auth: string): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++)
    statuses.push((await fetch(`${bases[i % 2]}/customers`, { headers: { authorization: auth } })).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
  for (const base of bases) {
    const res = await fetch(`${base}/customers`, { headers: { authorization: auth } });
    expect(res.status).toBe(429);
    const after = Number(res.headers.get('retry-after'));
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThanOrEqual(3600);
    const body = (await res.json()) as { message: string; errors: { base: string[] } };
    expect(body.errors.base).toEqual([body.message]);
    expect(body.message).toMatch(/^Too many requests for this shop; retry after \d+ seconds?$/);
  }
}

describe.skipIf(!pgUrl)('the API rate limit across kopek serve processes (set DATABASE_URL)', () => {
  it('holds across two processes on one PostgreSQL', async () => {
    const { bases, auth, store } = await pair({});
    await spendsOneBudget(bases, auth);
    const rows = await store.db.query<{ key: string }>(
      "SELECT key FROM cabinet_rate_limits WHERE key LIKE 'api:shop:%'",
    );
    expect(rows.length).toBe(1);
  });

  it('holds across two processes on one Redis (REDIS_URL)', async () => {
    const prefix = `kopek-test:${randomUUID()}:`;
    const redis = new Redis(REDIS_URL);
    try {
      const { bases, auth, store } = await pair({ REDIS_URL, REDIS_KEY_PREFIX: prefix });
      await spendsOneBudget(bases, auth);
      expect((await redis.keys(`${prefix}api:shop:*`)).length).toBe(1);
      // Nothing counted in PostgreSQL.
      expect(await store.db.query("SELECT key FROM cabinet_rate_limits WHERE key LIKE 'api:%'")).toEqual([]);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
