import { beforeAll, describe, expect, it } from 'vitest';
import { charge } from '../gateway/helpers.js';
import { type Client, client, harness, newShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';

/**
 * PHP shops send their order id as a number: `"tracking_id": 332`. An integer JSON number is taken
 * as its decimal text wherever the API takes a tracking_id (decisions.md); other types keep their 422.
 */

let api: Client;
beforeAll(async () => {
  const h = await harness();
  api = client(h, await newShop(h));
});

const checkout = (tracking_id: unknown) => ({
  checkout: {
    transaction_type: 'payment',
    order: { amount: 1250, currency: 'USD', description: 'Order 332', tracking_id },
  },
});

const NOT_TEXT: unknown[] = [3.5, true, { id: 332 }, [332]];

describe('tracking_id given as an integer number', () => {
  it.each([332, 0, -7, 9007199254740991])('a payment takes %s as its decimal text', async (n) => {
    const res = await api.post('/transactions/payments', { request: charge({ tracking_id: n }) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.transaction.tracking_id).toBe(String(n));
    const found = await api.get(`/v2/transactions/tracking_id/${n}`);
    expect(found.body.transactions[0].uid).toBe(res.body.transaction.uid);
  });

  it('a capture takes it too', async () => {
    const auth = (await api.post('/transactions/authorizations', { request: charge() })).body.transaction;
    const capture = await api.post('/transactions/captures', {
      request: { parent_uid: auth.uid, amount: 100, tracking_id: 333 },
    });
    expect(capture.status, capture.text).toBe(200);
    expect(capture.body.transaction.tracking_id).toBe('333');
  });

  it('a checkout keeps it as text in its order', async () => {
    const res = await api.post('/ctp/api/checkouts', checkout(332));
    expect(res.status, res.text).toBe(201);
    const read = await api.get(`/ctp/api/checkouts/${res.body.checkout.token}`);
    expect(read.body.checkout.order.tracking_id).toBe('332');
  });

  it('a subscription keeps it as text', async () => {
    const res = await api.post('/subscriptions', cardBody({ tracking_id: 332 }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.tracking_id).toBe('332');
  });
});

describe('tracking_id of another type than text or an integer', () => {
  it.each(NOT_TEXT)('a payment refuses %j', async (tracking_id) => {
    const res = await api.post('/transactions/payments', { request: charge({ tracking_id }) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: 'Tracking id must be a string.', errors: { tracking_id: ['must be a string'] } },
    });
  });

  it.each(NOT_TEXT)('a checkout refuses %j', async (tracking_id) => {
    const res = await api.post('/ctp/api/checkouts', checkout(tracking_id));
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({ checkout: { order: { tracking_id: ['must be a string'] } } });
  });

  it.each(NOT_TEXT)('a subscription refuses %j', async (tracking_id) => {
    const res = await api.post('/subscriptions', cardBody({ tracking_id }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Tracking id must be a string',
      errors: { tracking_id: ['must be a string'] },
    });
  });

  it('an integer beyond 2^53 is not exact, and is refused', async () => {
    const res = await api.post('/transactions/payments', {
      request: charge({ tracking_id: 1e20 }),
    });
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({ tracking_id: ['must be a string'] });
  });
});
