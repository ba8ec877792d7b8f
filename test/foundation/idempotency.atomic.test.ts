import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { createCustomer } from '../../src/customers/service.js';
import { ctxOf } from '../../src/http/ctx.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';

/**
 * A request with an Idempotency-Key and its stored answer commit together: what the request did
 * is kept exactly when its answer is, and "still running" lasts exactly as long as the request.
 */

let h: Harness;
let app: App;
let failNext = true;
let gate: Promise<void> = Promise.resolve();

const jane = { email: 'jane@example.com', ip: '203.0.113.7' };

beforeAll(async () => {
  h = await harness();
  app = await buildApp({
    config: h.config,
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    log: pino({ level: 'silent' }) as FastifyBaseLogger,
  });
  // Creates a customer, then fails once after it: what a request that dies half-way leaves.
  app.post('/customers-then-fail', async (request, reply) => {
    const customer = await createCustomer(ctxOf(request), jane);
    if (failNext) {
      failNext = false;
      throw new Error('failed after creating a customer');
    }
    return reply.code(201).send(customer);
  });
  // Creates a customer and then waits until the test lets it finish.
  app.post('/customers-slowly', async (request, reply) => {
    const customer = await createCustomer(ctxOf(request), jane);
    await gate;
    return reply.code(201).send(customer);
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

async function customersOf(shop: TestShop): Promise<number> {
  const [row] = await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM customers WHERE shop_id = $1',
    [shop.shop.id],
  );
  return row?.n ?? 0;
}

const post = (shop: TestShop, url: string, key: string) =>
  app.inject({
    method: 'POST',
    url,
    headers: { authorization: shop.auth, 'content-type': 'application/json', 'idempotency-key': key },
    payload: '{}',
  });

describe('Idempotency-Key: the effect and the stored answer commit together', () => {
  it('keeps nothing of a request answered 500, and runs its retry afresh', async () => {
    const shop = await newShop(h);
    failNext = true;
    const first = await post(shop, '/customers-then-fail', 'k-500');
    expect(first.statusCode).toBe(500);
    expect(await customersOf(shop)).toBe(0);
    const [stored] = await h.db.query('SELECT 1 FROM idempotency_keys WHERE shop_id = $1', [shop.shop.id]);
    expect(stored).toBeUndefined();

    const retry = await post(shop, '/customers-then-fail', 'k-500');
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await customersOf(shop)).toBe(1);
    const replay = await post(shop, '/customers-then-fail', 'k-500');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(retry.body);
    expect(await customersOf(shop)).toBe(1);
  });

  it('shows nothing of a running request to others, and nothing of its key is stored until it ends', async () => {
    const shop = await newShop(h);
    let open!: () => void;
    gate = new Promise((r) => {
      open = r;
    });
    const running = post(shop, '/customers-slowly', 'k-slow');
    // Wait until the request has created its customer and holds its transaction.
    for (let i = 0; i < 200 && h.db.kind === 'postgres'; i++) {
      const [row] = await h.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks
         WHERE locktype = 'advisory' AND classid = 727003 AND objsubid = 2 AND granted`,
      );
      if ((row?.n ?? 0) > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    if (h.db.kind === 'postgres') {
      // Another connection sees no customer and no key yet, and the same key is "still running".
      expect(await customersOf(shop)).toBe(0);
      const busy = await post(shop, '/customers-slowly', 'k-slow');
      expect(busy.statusCode).toBe(409);
      expect(JSON.parse(busy.body).errors.base).toEqual([expect.stringContaining('still being processed')]);
    }
    open();
    const first = await running;
    expect(first.statusCode).toBe(201);
    expect(await customersOf(shop)).toBe(1);
    const replay = await post(shop, '/customers-slowly', 'k-slow');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await customersOf(shop)).toBe(1);
  });

  it('holds no connection or lock after a keyed request', async () => {
    const shop = await newShop(h);
    for (let i = 0; i < 30; i++) {
      failNext = i % 2 === 0;
      await post(shop, '/customers-then-fail', `k-many-${i}`);
    }
    // A pool of ten connections would be exhausted if a request kept its transaction.
    const plain = await h.db.query<{ n: number }>('SELECT 1 AS n');
    expect(plain).toEqual([{ n: 1 }]);
    if (h.db.kind === 'postgres') {
      // This test's keys only: other files' keyed requests may hold their own locks meanwhile.
      const keys = Array.from({ length: 30 }, (_, i) => `${shop.shop.id}:k-many-${i}`);
      const [row] = await h.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = 727003
           AND objsubid = 2 AND objid::bigint IN (SELECT hashtext(k)::bigint & 4294967295 FROM unnest($1::text[]) k)`,
        [keys],
      );
      expect(row?.n).toBe(0);
    }
    expect(await customersOf(shop)).toBe(15);
  });
});
