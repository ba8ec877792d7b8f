import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, withClock } from '../harness.js';

/**
 * A checkout's `order.expired_at` is any future instant, with its offset written `Z`, `+hh:mm` or
 * `+hhmm`, as the platform takes it (its PHP client's tests send `2030-12-31T00:21:46+0300`).
 * Dates share one reading: years 1–9999, days the calendar has, offsets up to 14 hours.
 */

const NOW = '2026-01-15T10:00:00.000Z';
let h: Harness;
let api: Client;
beforeAll(async () => {
  h = await harness();
  api = client(h, await newShop(h));
});

const checkout = (expired_at: unknown) => ({
  checkout: {
    transaction_type: 'payment',
    order: { amount: 1250, currency: 'USD', description: 'Order 42', expired_at },
  },
});

const create = (expired_at: unknown) =>
  withClock(h, NOW, () => api.post('/ctp/api/checkouts', checkout(expired_at)));

const FORMAT = 'must be an ISO 8601 date and time, e.g. 2026-05-01T12:00:00+03:00';

describe("a checkout's order.expired_at", () => {
  it.each([
    ['2030-12-31T00:21:46+0300', '2030-12-30T21:21:46.000Z'],
    ['2030-12-31T00:21:46+03:00', '2030-12-30T21:21:46.000Z'],
    ['2030-12-31T00:21:46-0130', '2030-12-31T01:51:46.000Z'],
    ['2030-12-31T00:21:46Z', '2030-12-31T00:21:46.000Z'],
    ['2026-01-15T10:00:01Z', '2026-01-15T10:00:01.000Z'],
    ['9999-12-31T23:59:59+14:00', '9999-12-31T09:59:59.000Z'],
  ])('takes %s, any future instant', async (expired_at, instant) => {
    const res = await create(expired_at);
    expect(res.status, res.text).toBe(201);
    const read = (await api.get(`/ctp/api/checkouts/${res.body.checkout.token}`)).body.checkout;
    expect(read.expires_at).toBe(instant);
    expect(read.order.expired_at).toBe(expired_at);
  });

  it.each(['2026-01-15T10:00:00Z', '2026-01-15T12:59:59+03:00', '2020-01-01T00:00:00+0000'])(
    'refuses %s, not in the future',
    async (expired_at) => {
      const res = await create(expired_at);
      expect(res.status).toBe(422);
      expect(res.body.response.errors).toEqual({
        checkout: { order: { expired_at: ['must be in the future'] } },
      });
    },
  );

  it.each([
    '0000-01-01T00:00:00Z',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '9999-12-31T23:59:59-14:00',
    '2030-02-30T00:00:00Z',
    '2030-01-01T24:00:00Z',
    '2030-01-01T00:00:00+14:30',
    '2030-01-01T00:00:00+3',
    '2030-01-01T00:00:00',
    '2030-01-01',
    'tomorrow',
  ])('refuses %s, not an instant in the years 1–9999', async (expired_at) => {
    const res = await create(expired_at);
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({ checkout: { order: { expired_at: [FORMAT] } } });
  });
});
