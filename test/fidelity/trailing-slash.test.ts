import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, harness, newShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';

/**
 * Client libraries build paths both ways: `/customers` and `/customers/`. Every route answers the
 * same with and without one trailing slash.
 */

let api: Client;
beforeAll(async () => {
  const h = await harness();
  api = client(h, await newShop(h));
});

const customer = { email: 'slash@example.com', ip: '203.0.113.9' };

describe('one trailing slash', () => {
  it.each([
    ['/customers/', customer, 201],
    ['/ctp/api/checkouts/', {}, 422],
    ['/transactions/payments/', { request: {} }, 422],
    ['/subscriptions/', cardBody(), 201],
  ])('POST %s answers as without the slash', async (path, body, status) => {
    const slashed = await api.post(path, body);
    const plain = await api.post(path.slice(0, -1), body);
    expect(slashed.status, slashed.text).toBe(status);
    expect(plain.status, plain.text).toBe(status);
    if (status === 422) expect(slashed.body).toEqual(plain.body);
  });

  it('GET /products/ lists products, as GET /products does', async () => {
    const slashed = await api.get('/products/');
    const plain = await api.get('/products');
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual(plain.body);
  });

  it('GET /customers/{id}/ finds the customer', async () => {
    const created = await api.post('/customers', customer);
    const found = await api.get(`/customers/${created.body.id}/`);
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(created.body.id);
  });
});
