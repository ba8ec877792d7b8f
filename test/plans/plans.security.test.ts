import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';

let h: Harness;
let mine: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  mine = await newShop(h);
  api = client(h, mine);
});

const valid = {
  title: 'Basic',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
};

describe('plans: security', () => {
  it('answers 401 with WWW-Authenticate without credentials, on every plan route', async () => {
    const created = await api.post('/plans', valid);
    const anonymous = client(h, undefined);
    for (const res of [
      await anonymous.post('/plans', valid),
      await anonymous.get('/plans'),
      await anonymous.get(`/plans/${created.body.id}`),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
      expect(res.body.errors.base).toHaveLength(1);
      expect(res.text).not.toContain(created.body.id);
    }
  });

  it('answers 401 for a wrong key and creates nothing', async () => {
    const wrong = `Basic ${Buffer.from(`${mine.shop.id}:${'0'.repeat(64)}`).toString('base64')}`;
    const own = await newShop(h);
    const res = await client(h, undefined).post('/plans', valid, { authorization: wrong });
    expect(res.status).toBe(401);
    expect((await client(h, own).get('/plans')).body).toEqual([]);
  });

  it("never shows another shop's plan: 404 as for an unknown id, and not in the list", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/plans', valid);
    expect(created.status).toBe(201);
    const res = await api.get(`/plans/${created.body.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
    const list = await api.get('/plans');
    expect(list.body.map((p: { id: string }) => p.id)).not.toContain(created.body.id);
  });

  it("refuses another shop's plan as a list cursor", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/plans', valid);
    const res = await api.get(`/plans?starting_after=${created.body.id}`);
    expect(res.status).toBe(422);
  });

  it.each([
    ['another shop', () => String(mine.shop.id + 100_000)],
    ['a number of another shop', () => mine.shop.id + 1],
    ['garbage', () => 'abc'],
    ['an object', () => ({ id: mine.shop.id })],
  ])('refuses shop_id of %s with 422 shop_id is invalid', async (_what, shopId) => {
    const res = await api.post('/plans', { ...valid, shop_id: shopId() });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Shop id is invalid', errors: { shop_id: ['is invalid'] } });
  });

  it('creates the plan for the authenticated shop, whatever else the body says', async () => {
    const res = await api.post('/plans', { ...valid, shop_id: mine.shop.id, id: 'pln_chosenbytheclient' });
    expect(res.status).toBe(201);
    expect(res.body.shop_id).toBe(mine.shop.id);
    expect(res.body.id).not.toBe('pln_chosenbytheclient');
  });

  it('keeps Idempotency-Keys per shop: the same key in two shops makes two plans', async () => {
    const a = client(h, await newShop(h));
    const b = client(h, await newShop(h));
    const key = { 'idempotency-key': 'same-key' };
    const fromA = await a.post('/plans', valid, key);
    const fromB = await b.post('/plans', valid, key);
    expect(fromA.status).toBe(201);
    expect(fromB.status).toBe(201);
    expect(fromB.body.id).not.toBe(fromA.body.id);
    expect(fromB.body.shop_id).not.toBe(fromA.body.shop_id);
  });
});
