import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SIGN_IN_LIMITS } from '../../src/cabinet/sign-in-limits.js';
import { ManualClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { createPostgresDb } from '../../src/db/postgres.js';
import { redisLimitStore } from '../../src/limits/redis.js';
import { type LimitStore, postgresLimitStore } from '../../src/limits/store.js';
import { sharedStoreUrl } from '../fresh-store.js';
import { type Harness, harness, newShop } from '../harness.js';
import { cabinetClient } from './session.js';

/**
 * The cabinet's sign-in limits hold across instances: failures made on one instance count on the
 * other, whether the counters are in PostgreSQL or in Redis.
 */

const REDIS_URL = 'redis://127.0.0.1:6379';

async function instance(h: Harness, limits: LimitStore, clock: ManualClock, db: Db): Promise<App> {
  const config = loadConfig({
    PUBLIC_URL: h.config.publicUrl,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const log = pino({ level: 'silent' }) as FastifyBaseLogger;
  const app = await buildApp({ config, db, clock, masterKey: h.masterKey, log, limits });
  await app.ready();
  return app;
}

/** A visitor at `ip` on one instance: the sign-in form, then posts of it. */
async function visitor(h: Harness, app: App, ip: string) {
  const c = cabinetClient({ ...h, app }, ip);
  await c.get('/cabinet/sign-in');
  return (shopId: string, secret: string) =>
    c.post('/cabinet/sign-in', { shop_id: shopId, secret_key: secret });
}

/**
 * One address fails on a shop through both instances in turn: past the free failures, the next
 * attempt waits on either instance, the right key included; once the wait is over on the injected
 * clock, the right key signs in.
 */
async function holdsAcross(h: Harness, apps: [App, App], clock: ManualClock): Promise<void> {
  const shop = await newShop(h);
  const id = String(shop.shop.id);
  const ip = `10.78.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
  const tries = [await visitor(h, apps[0], ip), await visitor(h, apps[1], ip)];
  for (let i = 0; i < SIGN_IN_LIMITS.freeFailures; i++) {
    const signIn = tries[i % 2] as (typeof tries)[0];
    expect((await signIn(id, `wrong-${i}`)).status).toBe(401);
  }
  for (const signIn of tries) {
    const held = await signIn(id, shop.secret);
    expect(held.status).toBe(429);
    expect(held.retryAfter).toBe(30);
    expect(held.body).toContain('Too many sign-in attempts');
  }
  clock.advance(SIGN_IN_LIMITS.firstDelayMs);
  expect((await (tries[1] as (typeof tries)[0])(id, shop.secret)).status).toBe(303);
}

describe('sign-in limits across instances', () => {
  it('hold across two instances on one PostgreSQL store', async () => {
    const h = await harness();
    const url = sharedStoreUrl();
    const dbs = url ? [await createPostgresDb(url, 2), await createPostgresDb(url, 2)] : [h.db, h.db];
    const prefix = `test-${randomUUID()}:`;
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    const apps = (await Promise.all(
      dbs.map((db) => instance(h, postgresLimitStore(db, prefix), clock, db)),
    )) as [App, App];
    try {
      await holdsAcross(h, apps, clock);
      const [row] = await h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM cabinet_rate_limits WHERE key LIKE $1',
        [`${prefix}sign-in:%`],
      );
      expect(row?.n).toBeGreaterThan(0);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      await h.db.query('DELETE FROM cabinet_rate_limits WHERE key LIKE $1', [`${prefix}%`]);
      if (url) await Promise.all(dbs.map((db) => db.close()));
    }
  });

  it('hold across two instances on one Redis (REDIS_URL)', async () => {
    const h = await harness();
    const prefix = `kopek-test:${randomUUID()}:`;
    const clock = new ManualClock('2026-06-01T12:00:00Z');
    const stores = [redisLimitStore(REDIS_URL, { prefix }), redisLimitStore(REDIS_URL, { prefix })];
    const apps = (await Promise.all(stores.map((s) => instance(h, s, clock, h.db)))) as [App, App];
    const redis = new Redis(REDIS_URL);
    try {
      await holdsAcross(h, apps, clock);
      expect((await redis.keys(`${prefix}sign-in:*`)).length).toBeGreaterThan(0);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
      await Promise.all(stores.map((s) => s.close()));
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});
