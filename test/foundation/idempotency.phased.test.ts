import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import type { KeyResource, RecoveryPoint } from '../../src/context.js';
import { createPostgresDb } from '../../src/db/postgres.js';
import { ctxOf } from '../../src/http/ctx.js';
import { PHASED_LOCK_SPACE } from '../../src/http/idempotency/phased.js';
import { sharedStoreUrl } from '../fresh-store.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';

/**
 * The phased mode of Idempotency-Key (route `config: { idempotency: 'phased' }`): no transaction is
 * held across the request; "still running" is a key lock; the handler records recovery points in its
 * own batches, and a retry after a failure resumes from the last one it committed. Tried on routes
 * registered here only, as no production route is phased yet.
 */

let h: Harness;
let app: App;
const phased = { config: { idempotency: 'phased' as const } };

/** What each run of a handler saw of its key, by key. */
const seen = new Map<string, { point: RecoveryPoint; resource: KeyResource | null }[]>();
let gate: Promise<void> = Promise.resolve();
let entered: () => void = () => {};

function see(key: string, point: RecoveryPoint, resource: KeyResource | null): number {
  const runs = seen.get(key) ?? [];
  runs.push({ point, resource });
  seen.set(key, runs);
  return runs.length;
}

beforeAll(async () => {
  h = await harness();
  app = await buildApp({
    config: h.config,
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    log: pino({ level: 'silent' }) as FastifyBaseLogger,
  });
  // Claims a charge (the recovery point and what it is about, committed in the step's own batch),
  // then dies before answering; the run after resumes from the claim.
  app.post('/phased-claim', phased, async (request, reply) => {
    const ctx = ctxOf(request);
    const keyed = ctx.keyed;
    if (!keyed) throw new Error('a keyed request in the phased mode has ctx.keyed');
    see(String(request.headers['idempotency-key']), keyed.point, keyed.resource);
    if (keyed.point === 'started') {
      await ctx.db.batch([
        keyed.advance('charge_claimed', { subscription: 'sbs_probe', period: 1, attempt: 1 }),
      ]);
      throw new Error('died after claiming the charge');
    }
    return reply.code(201).send({ resumed_from: keyed.point, resource: keyed.resource, at: Math.random() });
  });
  // Fails before recording anything: a retry starts afresh.
  let failFirst = true;
  app.post('/phased-fail-early', phased, async (request, reply) => {
    const keyed = ctxOf(request).keyed;
    if (!keyed) throw new Error('no ctx.keyed');
    see(String(request.headers['idempotency-key']), keyed.point, keyed.resource);
    if (failFirst) {
      failFirst = false;
      throw new Error('failed before any step');
    }
    return reply.code(201).send({ point: keyed.point });
  });
  // Records 'finished' in its last step, then dies before its answer is stored.
  app.post('/phased-finish-then-die', phased, async (request) => {
    const ctx = ctxOf(request);
    const keyed = ctx.keyed;
    if (!keyed) throw new Error('no ctx.keyed');
    see(String(request.headers['idempotency-key']), keyed.point, keyed.resource);
    await ctx.db.batch([keyed.advance('finished', { subscription: 'sbs_done' })]);
    throw new Error('died before the answer was stored');
  });
  // Waits until the test lets it finish, holding no transaction meanwhile.
  app.post('/phased-slowly', phased, async (request, reply) => {
    const keyed = ctxOf(request).keyed;
    if (!keyed) throw new Error('no ctx.keyed');
    see(String(request.headers['idempotency-key']), keyed.point, keyed.resource);
    entered();
    await gate;
    return reply.code(201).send({ body: request.body, n: Math.random() });
  });
  // The default mode, for comparison: a transaction view, and no ctx.keyed.
  app.post('/atomic-probe', async (request, reply) => {
    const ctx = ctxOf(request);
    return reply
      .code(200)
      .send({ keyed: ctx.keyed !== undefined, inside: ctx.db.insideTransaction === true });
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

let seq = 0;
const newKey = () => `phased-${process.pid}-${++seq}`;

const post = (shop: TestShop, url: string, key: string, body: unknown = { a: 1 }) =>
  app.inject({
    method: 'POST',
    url,
    headers: { authorization: shop.auth, 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(body),
  });

async function keyRow(shop: TestShop, key: string) {
  const [row] = await h.db.query<{
    recovery_point: string;
    resource: unknown;
    status_code: number | null;
    response_body: string | null;
    updated_at: Date | null;
  }>(
    `SELECT recovery_point, resource, status_code, response_body, updated_at
     FROM idempotency_keys WHERE shop_id = $1 AND key = $2`,
    [shop.shop.id, key],
  );
  return row;
}

describe('Idempotency-Key in the phased mode', () => {
  it('resumes a request that died after claiming a charge from that point, with what it recorded', async () => {
    const shop = await newShop(h);
    const key = newKey();
    const first = await post(shop, '/phased-claim', key);
    expect(first.statusCode).toBe(500);
    // The claim was committed with its step; no answer is stored.
    expect(await keyRow(shop, key)).toMatchObject({
      recovery_point: 'charge_claimed',
      resource: { subscription: 'sbs_probe', period: 1, attempt: 1 },
      status_code: null,
      response_body: null,
      updated_at: expect.any(Date),
    });

    const retry = await post(shop, '/phased-claim', key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.json()).toMatchObject({
      resumed_from: 'charge_claimed',
      resource: { subscription: 'sbs_probe', period: 1, attempt: 1 },
    });
    expect(seen.get(key)).toEqual([
      { point: 'started', resource: null },
      { point: 'charge_claimed', resource: { subscription: 'sbs_probe', period: 1, attempt: 1 } },
    ]);
    expect(await keyRow(shop, key)).toMatchObject({ recovery_point: 'finished', status_code: 201 });

    // Replayed byte for byte, without running the handler again.
    const replay = await post(shop, '/phased-claim', key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(retry.body);
    expect(String(replay.headers['content-type'])).toMatch(/^application\/json/);
    expect(seen.get(key)).toHaveLength(2);
  });

  it('runs a request that failed before any step afresh', async () => {
    const shop = await newShop(h);
    const key = newKey();
    expect((await post(shop, '/phased-fail-early', key)).statusCode).toBe(500);
    expect(await keyRow(shop, key)).toBeUndefined();
    const retry = await post(shop, '/phased-fail-early', key);
    expect(retry.statusCode).toBe(201);
    expect(retry.json()).toEqual({ point: 'started' });
    expect(seen.get(key)).toEqual([
      { point: 'started', resource: null },
      { point: 'started', resource: null },
    ]);
  });

  it('answers 409 for a key whose work finished without a stored answer, and does it no second time', async () => {
    const shop = await newShop(h);
    const key = newKey();
    expect((await post(shop, '/phased-finish-then-die', key)).statusCode).toBe(500);
    expect(await keyRow(shop, key)).toMatchObject({ recovery_point: 'finished', status_code: null });
    const retry = await post(shop, '/phased-finish-then-die', key);
    expect(retry.statusCode).toBe(409);
    expect(retry.json().errors.base).toEqual([expect.stringContaining('still being processed')]);
    expect(seen.get(key)).toHaveLength(1);
  });

  it('answers 409 to the same key while the first request runs, holding no transaction meanwhile', async () => {
    const shop = await newShop(h);
    const key = newKey();
    let open!: () => void;
    gate = new Promise((r) => {
      open = r;
    });
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const running = post(shop, '/phased-slowly', key);
    await inside;
    // No transaction is open: on the embedded store's one connection this would wait for good.
    expect(await h.db.batch([{ sql: 'SELECT $1::int AS n', params: [5] }])).toEqual([[{ n: 5 }]]);
    const busy = await Promise.all([post(shop, '/phased-slowly', key), post(shop, '/phased-slowly', key)]);
    for (const b of busy) {
      expect(b.statusCode).toBe(409);
      expect(b.json().errors.base).toEqual([expect.stringContaining('still being processed')]);
    }
    // Another key is not held up.
    gate = Promise.resolve();
    const other = await post(shop, '/phased-slowly', newKey());
    expect(other.statusCode).toBe(201);
    open();
    const first = await running;
    expect(first.statusCode).toBe(201);
    const replay = await post(shop, '/phased-slowly', key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(seen.get(key)).toHaveLength(1);
  });

  it('gives one of many requests fired together with one key the work, and 409 or the replay to the rest', async () => {
    const shop = await newShop(h);
    const key = newKey();
    gate = Promise.resolve();
    const results = await Promise.all(Array.from({ length: 4 }, () => post(shop, '/phased-slowly', key)));
    const ran = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(ran).toHaveLength(1);
    for (const r of results) {
      if (r === ran[0]) continue;
      if (r.statusCode === 409) continue;
      expect(r.headers['idempotent-replayed']).toBe('true');
      expect(r.body).toBe(ran[0]?.body);
    }
    expect(seen.get(key)).toHaveLength(1);
  });

  it('answers 422 for the same key with another body, during and after the first request', async () => {
    const shop = await newShop(h);
    const key = newKey();
    expect((await post(shop, '/phased-claim', key, { a: 1 })).statusCode).toBe(500);
    const during = await post(shop, '/phased-claim', key, { a: 2 });
    expect(during.statusCode).toBe(422);
    expect(during.json().errors.idempotency_key).toEqual([expect.stringContaining('different request')]);
    expect((await post(shop, '/phased-claim', key, { a: 1 })).statusCode).toBe(201);
    const after = await post(shop, '/phased-claim', key, { a: 2 });
    expect(after.statusCode).toBe(422);
    // Whitespace and member order are the same request.
    const same = await app.inject({
      method: 'POST',
      url: '/phased-claim',
      headers: { authorization: shop.auth, 'content-type': 'application/json', 'idempotency-key': key },
      payload: '{ "a" : 1 }',
    });
    expect(same.headers['idempotent-replayed']).toBe('true');
    expect(seen.get(key)).toHaveLength(2);
  });

  it('leaves routes without the setting in the atomic mode: a transaction view, no ctx.keyed', async () => {
    const shop = await newShop(h);
    const res = await post(shop, '/atomic-probe', newKey());
    expect(res.json()).toEqual({ keyed: false, inside: true });
    const unkeyed = await app.inject({
      method: 'POST',
      url: '/atomic-probe',
      headers: { authorization: shop.auth, 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(unkeyed.json()).toEqual({ keyed: false, inside: false });
  });

  it('holds no key lock once the answer is stored', async () => {
    const shop = await newShop(h);
    const key = newKey();
    gate = Promise.resolve();
    expect((await post(shop, '/phased-slowly', key)).statusCode).toBe(201);
    const release = await h.db.lockKey(PHASED_LOCK_SPACE, `${shop.shop.id}:${key}`);
    expect(release).toBeTypeOf('function');
    await release?.();
  });
});

describe.runIf(process.env.DATABASE_URL)('Idempotency-Key in the phased mode across processes', () => {
  it('answers 409 while another process runs the key, and runs it once that process is gone', async () => {
    const shop = await newShop(h);
    const key = newKey();
    gate = Promise.resolve();
    // Another API process, holding the key mid-request.
    const other = createPostgresDb(sharedStoreUrl() as string, 2);
    try {
      const held = await other.lockKey(PHASED_LOCK_SPACE, `${shop.shop.id}:${key}`);
      expect(held).toBeTypeOf('function');
      const busy = await post(shop, '/phased-slowly', key);
      expect(busy.statusCode).toBe(409);
    } finally {
      // Killed: its connection closes without a word, and PostgreSQL drops its locks.
      await other.close();
    }
    let res = await post(shop, '/phased-slowly', key);
    for (let i = 0; i < 50 && res.statusCode === 409; i++) {
      await new Promise((r) => setTimeout(r, 20));
      res = await post(shop, '/phased-slowly', key);
    }
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });
});
