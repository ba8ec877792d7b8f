import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { openLimitStore } from '../../src/compose/limits.js';
import { buildServices } from '../../src/compose/services.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { gatewayServiceSecret } from '../../src/crypto/service-credential.js';
import type { Db } from '../../src/db/db.js';
import { createPostgresDb } from '../../src/db/postgres.js';
import { UNCOUNTED_MS } from '../../src/http/rate-limit.js';
import { LEASE_SHARE } from '../../src/limits/budget.js';
import { redisLimitStore } from '../../src/limits/redis.js';
import { type LimitStore, memoryLimitStore, postgresLimitStore } from '../../src/limits/store.js';
import { createShop } from '../../src/shops/service.js';
import { freshPglite, sharedStoreUrl } from '../fresh-store.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';
import { shopSigningKeys } from '../signing-keys.js';

/**
 * The API's per-shop rate limit: one budget per shop, spent by every instance that shares the limit
 * store (PostgreSQL, Redis), answered past it with 429 in the contract's error shape and Retry-After,
 * and renewed when its window ends on the injected clock.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';
const silent = pino({ level: 'silent' }) as FastifyBaseLogger;

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

/** An instance of Kopek on the run's store, with its own limit store and the given limit. */
async function instance(
  limits: LimitStore,
  clock: ManualClock,
  db: Db,
  limit = 5,
  windowSec = 60,
  log = silent,
  env: Record<string, string> = {},
): Promise<App> {
  const config = loadConfig({
    PUBLIC_URL: h.config.publicUrl,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    LOG_LEVEL: 'silent',
    API_RATE_LIMIT: String(limit),
    API_RATE_WINDOW: String(windowSec),
    ...env,
  });
  const app = await buildApp({ config, db, clock, masterKey: h.masterKey, log, limits });
  await app.ready();
  return app;
}

const list = (app: App, shop: TestShop) =>
  app.inject({ method: 'GET', url: '/customers', headers: { authorization: shop.auth } });

/** The requests in turn to each app, round and round: their statuses. */
async function spread(apps: App[], shop: TestShop, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await list(apps[i % apps.length] as App, shop)).statusCode);
  return statuses;
}

/**
 * Two instances on one limit store spend one budget: five requests between them, then 429 on
 * either, with Retry-After to the window's end; another shop is untouched; a new window on the
 * injected clock gives the budget back.
 */
async function sharesOneBudget(apps: [App, App], clock: ManualClock): Promise<void> {
  const shop = await newShop(h);
  const other = await newShop(h);
  expect(await spread(apps, shop, 5)).toEqual([200, 200, 200, 200, 200]);
  for (const app of apps) {
    const res = await list(app, shop);
    expect(res.statusCode).toBe(429);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toEqual({
      message: 'Too many requests for this shop; retry after 60 seconds',
      errors: { base: ['Too many requests for this shop; retry after 60 seconds'] },
    });
  }
  // A write is refused as well, and nothing is created by it.
  const post = await apps[0].inject({
    method: 'POST',
    url: '/customers',
    headers: { authorization: shop.auth, 'content-type': 'application/json' },
    payload: JSON.stringify({ email: 'limited@example.com', ip: '203.0.113.7' }),
  });
  expect(post.statusCode).toBe(429);
  // Another shop has a budget of its own.
  expect(await spread(apps, other, 2)).toEqual([200, 200]);

  // Retry-After counts down with the clock.
  clock.advance(45_500);
  expect((await list(apps[1], shop)).headers['retry-after']).toBe('15');
  clock.advance(14_500);
  expect(await spread(apps, shop, 6)).toEqual([200, 200, 200, 200, 200, 429]);
}

/** One limit store per instance on `open`, with a prefix of this test's own. */
async function twoInstances(open: () => Promise<LimitStore[]>) {
  const clock = new ManualClock('2026-06-01T12:00:00Z');
  const stores = await open();
  const apps = (await Promise.all(stores.map((s) => instance(s, clock, h.db)))) as [App, App];
  return {
    apps,
    clock,
    async close() {
      await Promise.all(apps.map((a) => a.close()));
      await Promise.all(stores.map((s) => s.close()));
    },
  };
}

describe('the API rate limit across instances', () => {
  it('holds across two instances on one PostgreSQL store', async () => {
    // On PostgreSQL each instance has a pool of its own; the embedded run shares its one store.
    const url = sharedStoreUrl();
    const own: Db[] = [];
    const prefix = `test-${randomUUID()}:`;
    const pair = await twoInstances(async () => {
      const dbs = url ? [await createPostgresDb(url, 2), await createPostgresDb(url, 2)] : [h.db, h.db];
      if (url) own.push(...dbs);
      return dbs.map((db) => postgresLimitStore(db, prefix));
    });
    try {
      await sharesOneBudget(pair.apps, pair.clock);
      const [row] = await h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM cabinet_rate_limits WHERE key LIKE $1',
        [`${prefix}api:shop:%`],
      );
      expect(row?.n).toBe(2);
    } finally {
      await pair.close();
      await h.db.query('DELETE FROM cabinet_rate_limits WHERE key LIKE $1', [`${prefix}%`]);
      await Promise.all(own.map((db) => db.close()));
    }
  });

  it('holds across two instances on one Redis (REDIS_URL)', async () => {
    const prefix = `kopek-test:${randomUUID()}:`;
    const pair = await twoInstances(async () => [
      redisLimitStore(REDIS_URL, { prefix }),
      redisLimitStore(REDIS_URL, { prefix }),
    ]);
    const redis = new Redis(REDIS_URL);
    try {
      await sharesOneBudget(pair.apps, pair.clock);
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBe(2);
      // Redis forgets a counter a little after its window: never a key that lives for ever.
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    } finally {
      await pair.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('counts in memory on the embedded store, where one process holds the store', async () => {
    const db = await freshPglite();
    try {
      const config = loadConfig({ KOPEK_MASTER_KEY: h.masterKey.toString('hex'), API_RATE_LIMIT: '3' });
      const clock = new ManualClock('2026-06-01T12:00:00Z');
      const built = await buildServices(config, { db, clock, masterKey: h.masterKey, log: silent });
      expect(built.services.limits?.kind).toBe('memory');
      const app = await buildApp(built.services);
      try {
        const { shop, secret } = await createShop(built.services, {
          name: 'Embedded shop',
          test: true,
          signingKeys: shopSigningKeys(),
        });
        const auth = `Basic ${Buffer.from(`${shop.id}:${secret}`).toString('base64')}`;
        const get = () => app.inject({ method: 'GET', url: '/customers', headers: { authorization: auth } });
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await get()).statusCode);
        expect(statuses).toEqual([200, 200, 200, 429]);
        // Nothing was written to the store's table.
        expect(await db.query('SELECT 1 FROM cabinet_rate_limits')).toEqual([]);
        clock.advance(60_000);
        expect((await get()).statusCode).toBe(200);
      } finally {
        await app.close();
        await built.close();
      }
    } finally {
      await db.close();
    }
  });

  it('never answers more than the limit across instances taking leases of it', async () => {
    // A limit of 4 × LEASE_SHARE: each instance asks the store for 4 requests at a time.
    const limit = 4 * LEASE_SHARE;
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    const prefix = `test-${randomUUID()}:`;
    const stores = [postgresLimitStore(h.db, prefix), postgresLimitStore(h.db, prefix)];
    const calls: number[] = [0, 0];
    const counted = stores.map(
      (s, i): LimitStore => ({
        ...s,
        add: (...args) => {
          calls[i] = (calls[i] ?? 0) + 1;
          return s.add(...args);
        },
      }),
    );
    const apps = await Promise.all(counted.map((s) => instance(s, clock, h.db, limit)));
    try {
      const shop = await newShop(h);
      // Three requests to the first instance for every one to the second, some of them at once.
      const statuses: number[] = [];
      for (let round = 0; round < limit / 2; round++) {
        const answers = await Promise.all([
          list(apps[0] as App, shop),
          list(apps[0] as App, shop),
          list(apps[0] as App, shop),
          list(apps[1] as App, shop),
        ]);
        statuses.push(...answers.map((r) => r.statusCode));
      }
      const ok = statuses.filter((s) => s === 200).length;
      expect(ok).toBeLessThanOrEqual(limit);
      // What an instance leased and did not use is lost: at most one lease each.
      expect(ok).toBeGreaterThanOrEqual(limit - 2 * 4);
      expect(statuses.filter((s) => s === 429).length).toBe(statuses.length - ok);
      // One store call per lease, not per request.
      expect((calls[0] ?? 0) + (calls[1] ?? 0)).toBeLessThanOrEqual(limit / 4 + 2);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      await h.db.query('DELETE FROM cabinet_rate_limits WHERE key LIKE $1', [`${prefix}%`]);
    }
  });

  it('leaves requests without a shop to their own answers', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    const app = await instance(memoryLimitStore(), clock, h.db, 1);
    try {
      const shop = await newShop(h);
      expect((await list(app, shop)).statusCode).toBe(200);
      expect((await list(app, shop)).statusCode).toBe(429);
      // The gateway's routes wrap the same body, as their other errors.
      const gateway = await app.inject({
        method: 'GET',
        url: '/v2/transactions/tracking_id/order-1',
        headers: { authorization: shop.auth },
      });
      expect(gateway.statusCode).toBe(429);
      expect(gateway.headers['retry-after']).toBe('60');
      expect(gateway.json()).toEqual({
        response: {
          // The gateway ends its messages with a full stop, as the platform does.
          message: 'Too many requests for this shop; retry after 60 seconds.',
          errors: { base: ['Too many requests for this shop; retry after 60 seconds'] },
        },
      });
      // Wrong credentials still answer 401, public routes still answer.
      const wrong = `Basic ${Buffer.from(`${shop.shop.id}:nope`).toString('base64')}`;
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ method: 'GET', url: '/customers', headers: { authorization: wrong } });
        expect(res.statusCode).toBe(401);
        expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
      }
    } finally {
      await app.close();
    }
  });

  it('goes on when the limit store cannot be reached, and logs it', async () => {
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    // Nothing listens on port 1.
    const unreachable = redisLimitStore('redis://127.0.0.1:1', { prefix: 'nowhere:' });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = pino({ level: 'warn' }, sink) as FastifyBaseLogger;
    const app = await instance(unreachable, clock, h.db, 1, 60, log);
    try {
      const shop = await newShop(h);
      expect((await list(app, shop)).statusCode).toBe(200);
      expect((await list(app, shop)).statusCode).toBe(200);
      // The second request did not ask the store again: one warning.
      const warned = () => lines.filter((l) => l.includes('the API rate limit could not be counted')).length;
      expect(warned()).toBe(1);
      // A while later the store is asked again (and fails again).
      clock.advance(UNCOUNTED_MS);
      expect((await list(app, shop)).statusCode).toBe(200);
      expect(warned()).toBe(2);
    } finally {
      await app.close();
      await unreachable.close();
    }
  });
});

describe('the API rate limit of a separate gateway deployment', () => {
  it("does not count the API deployment's calls, made with the shop's gateway credential", async () => {
    const token = randomBytes(32).toString('hex');
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    const limits = memoryLimitStore();
    const gateway = await instance(limits, clock, h.db, 3, 60, silent, { GATEWAY_TOKEN: token });
    try {
      const shop = await newShop(h);
      const lookUp = (secret: string) =>
        gateway.inject({
          method: 'GET',
          url: `/v2/transactions/tracking_id/none-${randomUUID()}`,
          headers: { authorization: `Basic ${Buffer.from(`${shop.shop.id}:${secret}`).toString('base64')}` },
        });
      const statuses = async (secret: string, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n; i++) out.push((await lookUp(secret)).statusCode);
        return out;
      };
      // The API deployment counted each of these requests where the shop made it.
      const service = gatewayServiceSecret(token, shop.shop.id);
      expect(await statuses(service, 6)).toEqual([200, 200, 200, 200, 200, 200]);
      // The shop's own key, on the gateway's routes directly, spends the shop's whole budget.
      expect(await statuses(shop.secret, 4)).toEqual([200, 200, 200, 429]);
      // The service credential names a deployment, not a way around a wrong key.
      expect(await statuses(gatewayServiceSecret(randomBytes(32).toString('hex'), shop.shop.id), 1)).toEqual([
        401,
      ]);
    } finally {
      await gateway.close();
      await limits.close();
    }
  });
});

describe('the limits configuration', () => {
  const key = '11'.repeat(32);
  it('defaults to a budget no benchmark reaches, and turns off with 0', () => {
    expect(loadConfig({}).apiRateLimit).toEqual({ limit: 600_000, windowMs: 60_000 });
    expect(loadConfig({ API_RATE_LIMIT: '0' }).apiRateLimit).toBeNull();
    expect(loadConfig({ API_RATE_LIMIT: '100', API_RATE_WINDOW: '1' }).apiRateLimit).toEqual({
      limit: 100,
      windowMs: 1000,
    });
    expect(loadConfig({ REDIS_URL: REDIS_URL, KOPEK_MASTER_KEY: key }).redisUrl).toBe(REDIS_URL);
    expect(loadConfig({}).redisKeyPrefix).toBe('kopek:limits:');
  });

  it('refuses wrong values, each with its own message, and never repeats a Redis URL', () => {
    const secretUrl = 'http://user:hunter2@127.0.0.1:6379';
    try {
      loadConfig({
        API_RATE_LIMIT: '-1',
        API_RATE_WINDOW: '0',
        REDIS_URL: secretUrl,
        REDIS_KEY_PREFIX: 'a b',
      });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems.some((p) => p.startsWith('API_RATE_LIMIT must be'))).toBe(true);
      expect(problems.some((p) => p.startsWith('API_RATE_WINDOW must be'))).toBe(true);
      expect(problems.some((p) => p.startsWith('REDIS_URL must be'))).toBe(true);
      expect(problems.some((p) => p.startsWith('REDIS_KEY_PREFIX must be'))).toBe(true);
      expect(problems.join('\n')).not.toContain('hunter2');
    }
  });

  it('keeps the counters in Redis when REDIS_URL is set, else in PostgreSQL, else in memory', async () => {
    const redis = openLimitStore({ redisUrl: REDIS_URL, redisKeyPrefix: 'x:' }, h.db);
    expect(redis.kind).toBe('redis');
    await redis.close();
    const embedded = await freshPglite();
    try {
      expect(openLimitStore({ redisUrl: undefined, redisKeyPrefix: 'x:' }, embedded).kind).toBe('memory');
      const pg = { ...embedded, kind: 'postgres' as const };
      expect(openLimitStore({ redisUrl: undefined, redisKeyPrefix: 'x:' }, pg).kind).toBe('postgres');
    } finally {
      await embedded.close();
    }
  });
});
