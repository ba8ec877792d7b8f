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

const valid = { name: 'E-book', description: 'A PDF book', currency: 'EUR', amount: 1999 };
const someId = `prd_${'a'.repeat(24)}`;

describe('products: security', () => {
  it.each([
    ['POST', '/products'],
    ['GET', '/products'],
    ['GET', `/products/${someId}`],
    ['PUT', `/products/${someId}`],
    ['GET', '/products/not-an-id'],
  ] as const)('answers %s %s with 401 and WWW-Authenticate without credentials', async (method, url) => {
    const res = await client(h, undefined).send(method, url, method === 'GET' ? undefined : valid);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body).toEqual({
      message: 'Authentication required: use HTTP Basic with shop id and secret key',
      errors: { base: ['Authentication required: use HTTP Basic with shop id and secret key'] },
    });
  });

  it('answers 401 for a wrong secret key and creates nothing', async () => {
    const authorization = `Basic ${Buffer.from(`${mine.shop.id}:${'0'.repeat(64)}`).toString('base64')}`;
    const res = await client(h, undefined).post('/products', valid, { authorization });
    expect(res.status).toBe(401);
    expect(res.body.errors).toEqual({ base: ['Invalid shop id or secret key'] });
    const fresh = client(h, await newShop(h));
    expect((await fresh.get('/products')).body).toEqual([]);
  });

  it("never shows another shop's product: 404 on GET, absent from the list", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/products', valid);
    expect(created.status).toBe(201);
    const res = await api.get(`/products/${created.body.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
    const list = await api.get('/products');
    expect(list.body.map((p: { id: string }) => p.id)).not.toContain(created.body.id);
  });

  it("never changes another shop's product: 404 on PUT, product untouched", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/products', valid);
    const res = await api.put(`/products/${created.body.id}`, { amount: 1, name: 'Hijacked' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
    expect((await theirs.get(`/products/${created.body.id}`)).body).toEqual(created.body);
  });

  it("refuses another shop's product as a list cursor", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/products', valid);
    const res = await api.get(`/products?starting_after=${created.body.id}`);
    expect(res.status).toBe(422);
  });

  it('refuses to create a product for another shop through shop_id', async () => {
    const other = await newShop(h);
    const res = await api.post('/products', { ...valid, shop_id: other.shop.id });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ shop_id: ['is invalid'] });
    expect((await client(h, other).get('/products')).body).toEqual([]);
  });

  it('links every product to its own shop in confirm_url', async () => {
    const res = await api.post('/products', valid);
    expect(res.body.confirm_url).toMatch(new RegExp(`/v2/confirm_order/${res.body.id}/${mine.shop.id}$`));
  });

  it("keeps one shop's Idempotency-Key apart from another's", async () => {
    const a = client(h, await newShop(h));
    const b = client(h, await newShop(h));
    const headers = { 'idempotency-key': 'same-key' };
    const first = await a.post('/products', valid, headers);
    const second = await b.post('/products', valid, headers);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.body.id).not.toBe(first.body.id);
    expect((await b.get(`/products/${first.body.id}`)).status).toBe(404);
  });
});
