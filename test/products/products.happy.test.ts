import { beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  client,
  type Harness,
  harness,
  newShop,
  TEST_PUBLIC_URL,
  type TestShop,
} from '../harness.js';
import { expectNewestFirstPages } from '../lists.js';

let h: Harness;
let me: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  // A live shop: a test shop's products are always test products (test/fidelity/test-mode.test.ts).
  me = await newShop(h, { test: false });
  api = client(h, me);
});

const CHECKOUT_URL = 'http://checkout.kopek.test';
const minimal = { name: 'E-book', description: 'A PDF book', currency: 'EUR', amount: 1999 };

/** The whole response body of a product: given fields over the defaults, links from id and shop. */
function productBody(id: string, at: string, fields: Record<string, unknown>) {
  return {
    id,
    quantity: null,
    infinite: true,
    visible_fields: [],
    test: false,
    immortal: false,
    expired_at: null,
    return_url: null,
    language: 'en',
    transaction_type: 'payment',
    additional_data: {},
    ...fields,
    created_at: at,
    updated_at: at,
    pay_url: `${TEST_PUBLIC_URL}/products/${id}/pay`,
    payment_url: `${TEST_PUBLIC_URL}/products/${id}/pay`,
    confirm_url: `${CHECKOUT_URL}/v2/confirm_order/${id}/${me.shop.id}`,
  };
}

async function storedRow(id: string) {
  const [row] = await h.db.query<Record<string, unknown>>('SELECT * FROM products WHERE id = $1', [id]);
  return row as Record<string, unknown>;
}

describe('products: create', () => {
  it('creates a product with every field and returns it exactly', async () => {
    const full = {
      name: 'Concert ticket',
      description: 'Row 5, seat 12',
      currency: 'USD',
      amount: 2500,
      quantity: 40,
      infinite: false,
      visible_fields: ['first_name', 'last_name', 'email', 'phone'],
      test: true,
      immortal: true,
      expired_at: '2026-12-31T18:20:45+03:00',
      return_url: 'https://shop.example.com/thanks',
      language: 'ru',
      transaction_type: 'authorization',
      additional_data: { receipt_text: ['Thank you'], meta: { order: 7 } },
    };
    const at = h.clock.now().toISOString();
    const res = await api.post('/products', full);
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(/^prd_[0-9A-Za-z]{24}$/);
    expect(res.body).toEqual(productBody(res.body.id, at, full));
  });

  it('fills the defaults when only the required fields are sent', async () => {
    const at = h.clock.now().toISOString();
    const res = await api.post('/products', minimal);
    expect(res.status).toBe(201);
    expect(res.body).toEqual(productBody(res.body.id, at, minimal));
  });

  it('takes numeric strings and returns integers; a quantity alone makes the stock finite', async () => {
    const res = await api.post('/products', { ...minimal, amount: '1999', quantity: '5' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ amount: 1999, quantity: 5, infinite: false });
  });

  it('accepts a quantity of 0', async () => {
    const res = await api.post('/products', { ...minimal, quantity: 0, infinite: false });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ quantity: 0, infinite: false });
  });

  it('stores and returns quantity null when infinite is true', async () => {
    const res = await api.post('/products', { ...minimal, infinite: true, quantity: 10 });
    expect(res.body).toMatchObject({ quantity: null, infinite: true });
    expect((await storedRow(res.body.id)).quantity).toBeNull();
  });

  it('accepts `visible` as another name for visible_fields and drops repeats', async () => {
    const res = await api.post('/products', { ...minimal, visible: ['email', 'zip', 'email'] });
    expect(res.status).toBe(201);
    expect(res.body.visible_fields).toEqual(['email', 'zip']);
  });

  it('keeps expired_at as given and stores the instant it names', async () => {
    const cases: [string, string][] = [
      ['2026-03-01', '2026-03-01T23:59:59.999Z'],
      ['2028-02-29', '2028-02-29T23:59:59.999Z'],
      ['2026-03-01T18:20:45+03:00', '2026-03-01T15:20:45.000Z'],
      ['2026-03-01T01:00:00-02:30', '2026-03-01T03:30:00.000Z'],
      ['2026-03-01T18:20:45Z', '2026-03-01T18:20:45.000Z'],
      ['2026-03-01T18:20:45.123Z', '2026-03-01T18:20:45.123Z'],
      // The platform's clients write offsets without the colon too; seconds may be left out (ISO 8601).
      ['2026-03-01T10:00:00+0200', '2026-03-01T08:00:00.000Z'],
      ['2026-03-01T10:00Z', '2026-03-01T10:00:00.000Z'],
      ['9999-12-31T23:59:59+14:00', '9999-12-31T09:59:59.000Z'],
      ['9999-12-31', '9999-12-31T23:59:59.999Z'],
      ['2026-03-01T10:00:00-14:00', '2026-03-02T00:00:00.000Z'],
    ];
    for (const [expired_at, instant] of cases) {
      const res = await api.post('/products', { ...minimal, expired_at });
      expect(res.status, expired_at).toBe(201);
      expect(res.body.expired_at).toBe(expired_at);
      expect(((await storedRow(res.body.id)).expires_at as Date).toISOString(), expired_at).toBe(instant);
    }
  });

  it('keeps platform fields it does not act on and ignores unknown ones', async () => {
    const res = await api.post('/products', {
      ...minimal,
      success_url: 'https://shop.example.com/ok',
      fail_url: 'https://shop.example.com/fail',
      notification_url: 'https://shop.example.com/hook',
      colour: 'blue',
    });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('colour');
    expect((await storedRow(res.body.id)).extra).toEqual({
      success_url: 'https://shop.example.com/ok',
      fail_url: 'https://shop.example.com/fail',
      notification_url: 'https://shop.example.com/hook',
    });
  });

  it("accepts the shop's own id as shop_id, as a string or an integer", async () => {
    for (const shop_id of [me.shop.id, String(me.shop.id)]) {
      const res = await api.post('/products', { ...minimal, shop_id });
      expect(res.status, String(shop_id)).toBe(201);
    }
  });

  it('accepts a crypto currency and an http return_url', async () => {
    const res = await api.post('/products', {
      ...minimal,
      currency: 'BTC',
      return_url: 'http://localhost:8080/back?x=1',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: 'BTC', return_url: 'http://localhost:8080/back?x=1' });
  });
});

describe('products: read and list', () => {
  it('reads a product back', async () => {
    const created = await api.post('/products', { ...minimal, quantity: 3, visible_fields: ['email'] });
    const res = await api.get(`/products/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it('lists products newest first and pages with limit, starting_after and a Link header', async () => {
    const own = client(h, await newShop(h));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await own.post('/products', { ...minimal, name: `P${i}` })).body.id);
    await expectNewestFirstPages(own, '/products', ids);
  });

  it('lists an empty array for a shop without products', async () => {
    const res = await client(h, await newShop(h)).get('/products');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});

describe('products: update', () => {
  it('changes only the amount, answers 204 with an empty body and moves updated_at', async () => {
    const created = await api.post('/products', { ...minimal, quantity: 7, language: 'de' });
    h.clock.advance(60_000);
    const later = h.clock.now().toISOString();
    const res = await api.put(`/products/${created.body.id}`, { amount: '500' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const read = await api.get(`/products/${created.body.id}`);
    expect(read.body).toEqual({ ...created.body, amount: 500, updated_at: later });
  });

  it('makes an infinite product finite when a quantity is sent', async () => {
    const created = await api.post('/products', minimal);
    expect((await api.put(`/products/${created.body.id}`, { quantity: 12 })).status).toBe(204);
    const read = await api.get(`/products/${created.body.id}`);
    expect(read.body).toMatchObject({ quantity: 12, infinite: false });
  });

  it('clears the quantity when infinite becomes true', async () => {
    const created = await api.post('/products', { ...minimal, quantity: 4 });
    expect((await api.put(`/products/${created.body.id}`, { infinite: true })).status).toBe(204);
    const read = await api.get(`/products/${created.body.id}`);
    expect(read.body).toMatchObject({ quantity: null, infinite: true });
    expect((await storedRow(created.body.id)).quantity).toBeNull();
  });

  it('keeps the stored quantity when only other fields change', async () => {
    const created = await api.post('/products', { ...minimal, quantity: 4 });
    await api.put(`/products/${created.body.id}`, { name: 'Renamed', infinite: false });
    const read = await api.get(`/products/${created.body.id}`);
    expect(read.body).toMatchObject({ name: 'Renamed', quantity: 4, infinite: false });
  });

  it('clears optional fields sent as null and replaces visible_fields through `visible`', async () => {
    const created = await api.post('/products', {
      ...minimal,
      expired_at: '2026-06-01',
      return_url: 'https://shop.example.com/r',
      visible_fields: ['email'],
      success_url: 'https://shop.example.com/ok',
    });
    const res = await api.put(`/products/${created.body.id}`, {
      expired_at: null,
      return_url: null,
      visible: ['phone', 'zip'],
      fail_url: 'https://shop.example.com/fail',
    });
    expect(res.status).toBe(204);
    const read = await api.get(`/products/${created.body.id}`);
    expect(read.body).toMatchObject({ expired_at: null, return_url: null, visible_fields: ['phone', 'zip'] });
    const row = await storedRow(created.body.id);
    expect(row.expires_at).toBeNull();
    expect(row.extra).toEqual({
      success_url: 'https://shop.example.com/ok',
      fail_url: 'https://shop.example.com/fail',
    });
  });

  it('accepts an empty update and changes nothing but updated_at', async () => {
    const created = await api.post('/products', minimal);
    const res = await api.put(`/products/${created.body.id}`, {});
    expect(res.status).toBe(204);
    const read = await api.get(`/products/${created.body.id}`);
    expect({ ...read.body, updated_at: created.body.updated_at }).toEqual(created.body);
  });
});

describe('products: Idempotency-Key', () => {
  it('replays the first response for the same key and body and creates one product', async () => {
    const own = client(h, await newShop(h));
    const headers = { 'idempotency-key': 'order-42' };
    const first = await own.post('/products', minimal, headers);
    const again = await own.post('/products', minimal, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const list = await own.get('/products');
    expect(list.body.map((p: { id: string }) => p.id)).toEqual([first.body.id]);
  });

  it('refuses a reused Idempotency-Key with a different body and creates nothing more', async () => {
    const headers = { 'idempotency-key': 'prd-key-1' };
    const own = client(h, await newShop(h));
    const first = await own.post('/products', minimal, headers);
    expect(first.status).toBe(201);
    const res = await own.post('/products', { ...minimal, amount: 1 }, headers);
    const message = 'was already used with a different request; use a new key for a new request';
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: `Idempotency key ${message}`,
      errors: { idempotency_key: [message] },
    });
    expect((await own.get('/products')).body).toHaveLength(1);
  });
});
