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

describe('customers: security', () => {
  it('answers 401 with WWW-Authenticate without credentials', async () => {
    const res = await client(h, undefined).get('/customers');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body.errors.base).toHaveLength(1);
  });

  it('answers 401 for a wrong key, an unknown shop and a malformed header', async () => {
    for (const authorization of [
      `Basic ${Buffer.from(`${mine.shop.id}:${'0'.repeat(64)}`).toString('base64')}`,
      `Basic ${Buffer.from(`999999:${mine.secret}`).toString('base64')}`,
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      'Bearer abc',
    ]) {
      const res = await client(h, undefined).get('/customers', { authorization });
      expect(res.status, authorization).toBe(401);
    }
  });

  it("never shows another shop's customer: 404 as for an unknown id", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/customers', { email: 'other@example.com', ip: '10.0.0.2' });
    const res = await api.get(`/customers/${created.body.id}`);
    expect(res.status).toBe(404);
    const list = await api.get('/customers');
    expect(list.body.map((c: { id: string }) => c.id)).not.toContain(created.body.id);
  });

  it("refuses another shop's customer as a list cursor", async () => {
    const theirs = client(h, await newShop(h));
    const created = await theirs.post('/customers', { email: 'other@example.com', ip: '10.0.0.2' });
    const res = await api.get(`/customers?starting_after=${created.body.id}`);
    expect(res.status).toBe(422);
  });
});
