import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { buildApp } from '../../src/compose/app.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

const jane = { email: 'jane@example.com', ip: '203.0.113.7' };
let keySeq = 0;
const newKey = () => `key-${process.pid}-${Date.now()}-${++keySeq}`;

async function customersOf(shop: TestShop): Promise<number> {
  const [row] = await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM customers WHERE shop_id = $1',
    [shop.shop.id],
  );
  return row?.n ?? 0;
}

async function asNewShop(): Promise<{ shop: TestShop; api: Client }> {
  const shop = await newShop(h);
  return { shop, api: client(h, shop) };
}

describe('Idempotency-Key on POST /customers', () => {
  it('replays the first response for the same key and body, creating one customer', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    const first = await api.post('/customers', jane, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const second = await api.post('/customers', jane, { 'idempotency-key': key });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(String(second.headers['content-type'])).toMatch(/^application\/json/);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await customersOf(shop)).toBe(1);
  });

  it('replays a retry whose JSON differs only in whitespace', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    const first = await api.post('/customers', jane, { 'idempotency-key': key });
    // The raw text differs (whitespace), the parsed body does not.
    const second = await api.post('/customers', JSON.stringify(jane, null, 2), { 'idempotency-key': key });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(await customersOf(shop)).toBe(1);
  });

  it('answers 422 for the same key with another body, and creates nothing', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    await api.post('/customers', jane, { 'idempotency-key': key });
    const other = await api.post(
      '/customers',
      { ...jane, email: 'john@example.com' },
      { 'idempotency-key': key },
    );
    expect(other.status).toBe(422);
    expect(other.body.errors.idempotency_key).toEqual([expect.stringContaining('different request')]);
    expect(other.body.message).toMatch(/^Idempotency key /);
    expect(await customersOf(shop)).toBe(1);
  });

  it('keeps keys per shop: another shop may use the same key', async () => {
    const a = await asNewShop();
    const b = await asNewShop();
    const key = newKey();
    const first = await a.api.post('/customers', jane, { 'idempotency-key': key });
    const second = await b.api.post(
      '/customers',
      { ...jane, email: 'bob@example.com' },
      { 'idempotency-key': key },
    );
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await customersOf(a.shop)).toBe(1);
    expect(await customersOf(b.shop)).toBe(1);
  });

  it('refuses a key longer than 255 characters with 422, and accepts exactly 255', async () => {
    const { shop, api } = await asNewShop();
    const long = await api.post('/customers', jane, { 'idempotency-key': 'k'.repeat(256) });
    expect(long.status).toBe(422);
    expect(long.body.errors).toEqual({ idempotency_key: [expect.any(String)] });
    expect(await customersOf(shop)).toBe(0);

    const max = await api.post('/customers', jane, { 'idempotency-key': 'k'.repeat(255) });
    expect(max.status).toBe(201);
  });

  it('never creates two customers for two requests with one key fired together', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    const results = await Promise.all([
      api.post('/customers', jane, { 'idempotency-key': key }),
      api.post('/customers', jane, { 'idempotency-key': key }),
      api.post('/customers', jane, { 'idempotency-key': key }),
    ]);
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const r of results) {
      if (r === created[0]) continue;
      if (r.status === 409) {
        expect(r.body.errors.base).toEqual([expect.stringContaining('still being processed')]);
      } else {
        expect(r.status).toBe(201);
        expect(r.headers['idempotent-replayed']).toBe('true');
        expect(r.text).toBe(created[0]?.text);
      }
    }
    expect(await customersOf(shop)).toBe(1);
  });

  it('stores a 422 and replays it', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    const first = await api.post('/customers', { email: 'jane@example.com' }, { 'idempotency-key': key });
    expect(first.status).toBe(422);
    const second = await api.post('/customers', { email: 'jane@example.com' }, { 'idempotency-key': key });
    expect(second.status).toBe(422);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await customersOf(shop)).toBe(0);
  });

  it('does not touch requests without the header', async () => {
    const { shop, api } = await asNewShop();
    const a = await api.post('/customers', jane);
    const b = await api.post('/customers', jane);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.headers['idempotent-replayed']).toBeUndefined();
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.body.id).not.toBe(b.body.id);
    expect(await customersOf(shop)).toBe(2);
  });

  it('ignores the header on GET', async () => {
    const { api } = await asNewShop();
    const key = newKey();
    const res = await api.get('/customers', { 'idempotency-key': key });
    expect(res.status).toBe(200);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    const [row] = await h.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [key]);
    expect(row).toBeUndefined();
  });

  it('keeps answering 409 for a key an older version left running, and does the work no second time', async () => {
    const { shop, api } = await asNewShop();
    const key = newKey();
    // Kopek before keyed transactions marked a running key with a row without an answer; after the
    // upgrade such a row has an unverifiable fingerprint. Its request may have done its work.
    const twoHoursAgo = new Date(h.clock.now().getTime() - 2 * 60 * 60 * 1000);
    await h.db.query(
      'INSERT INTO idempotency_keys (shop_id, key, fingerprint, created_at) VALUES ($1, $2, $3, $4)',
      [shop.shop.id, key, 'unverifiable', twoHoursAgo],
    );
    const retry = await api.post('/customers', jane, { 'idempotency-key': key });
    expect(retry.status).toBe(409);
    expect(await customersOf(shop)).toBe(0);
  });

  it('frees a key after 24 hours', async () => {
    // A clock of its own, so advancing it cannot disturb tests sharing the harness clock.
    const clock = new ManualClock(h.clock.now());
    const app = await buildApp({
      config: h.config,
      db: h.db,
      clock,
      masterKey: h.masterKey,
      log: pino({ level: 'silent' }) as FastifyBaseLogger,
    });
    try {
      await app.ready();
      const { shop } = await asNewShop();
      const key = newKey();
      const post = async (body: unknown) =>
        app.inject({
          method: 'POST',
          url: '/customers',
          headers: { authorization: shop.auth, 'content-type': 'application/json', 'idempotency-key': key },
          payload: JSON.stringify(body),
        });
      const first = await post(jane);
      expect(first.statusCode).toBe(201);

      clock.advance(23 * 60 * 60 * 1000);
      const within = await post(jane);
      expect(within.headers['idempotent-replayed']).toBe('true');
      expect(within.body).toBe(first.body);

      clock.advance(60 * 60 * 1000 + 1000);
      const after = await post({ ...jane, email: 'later@example.com' });
      expect(after.statusCode).toBe(201);
      expect(after.headers['idempotent-replayed']).toBeUndefined();
      expect(JSON.parse(after.body).email).toBe('later@example.com');
      expect(await customersOf(shop)).toBe(2);
    } finally {
      await app.close();
    }
  });
});
