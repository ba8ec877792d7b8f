import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';

/**
 * Text from the URL reaches SQL as well as the body's: PostgreSQL refuses U+0000 in text, which would
 * be a 500, so path parameters and query strings are checked like bodies.
 */

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const notFound = { message: 'Record not found', errors: { base: ['Record not found'] } };
const invalid = (field: string) => ({
  message: `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} contains invalid characters`,
  errors: { [field]: ['contains invalid characters'] },
});

describe('a NUL character in a path parameter', () => {
  it('answers 404 as for any id that names nothing', async () => {
    for (const url of ['/customers/%00', '/plans/cst_%00', '/subscriptions/a%00b']) {
      const res = await api.get(url);
      expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 404, body: notFound });
    }
    const cancel = await api.post('/subscriptions/%00/cancel', { cancel_reason: 'Moved away' });
    expect(cancel.status, cancel.text).toBe(404);
    expect(cancel.body).toEqual(notFound);
  });

  it('answers 404 in the gateway envelope on gateway routes', async () => {
    for (const url of [
      '/transactions/%00',
      '/v2/transactions/tracking_id/%00',
      '/v2/transactions/tracking_id/x%00',
    ]) {
      const res = await api.get(url);
      expect({ url, status: res.status, body: res.body }).toEqual({
        url,
        status: 404,
        // The gateway words its messages as the platform does; the errors are the same.
        body: { response: { message: expect.any(String), errors: notFound.errors } },
      });
    }
  });

  it('answers 404 on the proof routes', async () => {
    const proof = await api.post('/alt/transactions/%00/proof', { request: {} });
    expect(proof.status, proof.text).toBe(404);
    const document = await api.get('/beyag/transactions/%00/proof/document');
    expect(document.status, document.text).toBe(404);
    expect(document.body).toEqual(notFound);
  });

  it('keeps the contract 302 for a malformed product id', async () => {
    const malformed = { message: 'Id is invalid', errors: { id: ['is invalid'] } };
    const read = await api.get('/products/%00');
    expect(read.status).toBe(302);
    expect(read.body).toEqual(malformed);
    const update = await api.put('/products/prd_%00', { amount: 5 });
    expect(update.status).toBe(302);
    expect(update.body).toEqual(malformed);
  });

  it('asks for credentials first, as for any other id', async () => {
    const res = await client(h, undefined).get('/customers/%00');
    expect(res.status).toBe(401);
  });
});

describe('a NUL character in a query value or name', () => {
  it('answers 422 naming the parameter, as a body field would be named', async () => {
    const cases: [string, string][] = [
      ['/customers?starting_after=%00', 'starting_after'],
      ['/plans?starting_after=pln_%00', 'starting_after'],
      ['/products?limit=10&starting_after=%00x', 'starting_after'],
      ['/subscriptions?tracking_id=%00', 'tracking_id'],
      ['/subscriptions?customer_id=a%00&state=active', 'customer_id'],
      ['/subscriptions?plan_id=%00', 'plan_id'],
    ];
    for (const [url, field] of cases) {
      const res = await api.get(url);
      expect({ url, status: res.status, body: res.body }).toEqual({ url, status: 422, body: invalid(field) });
    }
  });

  it('names each parameter once, also when it is repeated', async () => {
    const res = await api.get('/subscriptions?tracking_id=%00&tracking_id=ok&state=%00');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      tracking_id: ['contains invalid characters'],
      state: ['contains invalid characters'],
    });
  });

  it('answers 422 for a parameter name with a NUL, which no route reads', async () => {
    const res = await api.get('/customers?a%00b=1');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Query string contains a parameter name with invalid characters',
      errors: { base: ['Query string contains a parameter name with invalid characters'] },
    });
  });

  it('answers in the gateway envelope on gateway routes', async () => {
    const res = await api.get('/transactions/00000000-0000-0000-0000-000000000000?x=%00');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ response: { message: expect.any(String), errors: invalid('x').errors } });
  });

  it('still lists as before when the values are ordinary', async () => {
    const res = await api.get('/subscriptions?tracking_id=order-%C3%A9-1&limit=5');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
});

describe('a path the router cannot take apart', () => {
  it('answers 400 in the contract shape for broken percent-encoding', async () => {
    for (const url of ['/customers/%', '/customers/%zz', '/plans/%C0%80', '/transactions/%ED%A0%80']) {
      const res = await api.get(url);
      expect({ url, status: res.status, body: res.body }).toEqual({
        url,
        status: 400,
        body: {
          message: 'Request path is not valid percent-encoded UTF-8',
          errors: { base: ['Request path is not valid percent-encoded UTF-8'] },
        },
      });
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('answers 414 in the contract shape for a path parameter beyond the router limit', async () => {
    const res = await api.get(`/subscriptions/${'%00'.repeat(800)}`);
    expect(res.status).toBe(414);
    expect(res.body).toEqual({
      message: 'A path segment of the request is too long',
      errors: { base: ['A path segment of the request is too long'] },
    });
  });
});
