import { beforeAll, describe, expect, it } from 'vitest';
import { client, type Harness, harness, newShop } from '../harness.js';
import { advance, card, frozen, monthly, REAL_NOW, type Setup, setup, subscribe } from './support.js';

/**
 * `POST /test_clock/reset`: a test shop back to a clean start after a tour that left its clock a
 * year ahead. Everything it did is gone, its clock stands at now, and it behaves as a new shop;
 * other shops are untouched and live shops are refused.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

/** Every table with a `shop_id`: what a shop owns, however many tables later migrations add. */
async function shopTables(): Promise<string[]> {
  const rows = await h.db.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
     JOIN information_schema.tables t USING (table_schema, table_name)
     WHERE c.table_schema = current_schema() AND c.column_name = 'shop_id' AND t.table_type = 'BASE TABLE'
     ORDER BY 1`,
  );
  return rows.map((r) => r.table_name);
}

async function rowsOf(shopId: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await shopTables()) {
    const [row] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE shop_id = $1`,
      [shopId],
    );
    counts[table] = row?.n ?? 0;
  }
  return counts;
}

/** A shop that did a bit of everything: a product, a plan, subscriptions (by card and by redirect), a refunded payment, a year of renewals. */
async function busyShop(s: Setup) {
  expect(
    (await s.api.post('/products', { name: 'Tea', description: 'Green', currency: 'EUR', amount: 500 }))
      .status,
  ).toBe(201);
  expect((await s.api.post('/plans', monthly())).status).toBe(201);
  expect((await s.api.post('/customers', { email: 'ann@example.com', ip: '203.0.113.9' })).status).toBe(201);
  const sub = await subscribe(s);
  const redirect = await s.api.post('/subscriptions', {
    plan: monthly(),
    customer: { email: 'bob@example.com', ip: '203.0.113.7' },
    return_url: 'https://shop.example/back',
  });
  expect(redirect.status, redirect.text).toBe(201);
  const checkout = await s.api.post('/ctp/api/checkouts', {
    checkout: { transaction_type: 'payment', order: { amount: 700, currency: 'EUR', description: 'Cups' } },
  });
  expect(checkout.status, checkout.text).toBe(201);
  const paid = await s.api.post(
    '/transactions/payments',
    {
      request: {
        amount: 1000,
        currency: 'EUR',
        description: 'Order 7',
        tracking_id: 'order-7',
        credit_card: card(),
      },
    },
    { 'idempotency-key': 'pay-order-7' },
  );
  expect(paid.body.transaction?.status, paid.text).toBe('successful');
  const refund = await s.api.post('/transactions/refunds', {
    request: { parent_uid: paid.body.transaction.uid, amount: 400, reason: 'Broken cup' },
  });
  expect(refund.status, refund.text).toBe(200);
  await advance(s, { by: 'P1Y' });
  return sub as { id: string };
}

describe('POST /test_clock/reset', () => {
  it('deletes everything the test shop did and sets its clock to now; the shop behaves as a new one', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const other = await setup(h);
      await busyShop(s);
      await subscribe(other);
      await advance(other, { by: 'P1M' });
      const otherBefore = await rowsOf(other.shop.shop.id);
      const otherClock = (await other.api.get('/test_clock')).body;

      const before = await rowsOf(s.shop.shop.id);
      for (const table of ['transactions', 'subscriptions', 'customers', 'events', 'cards', 'ctp_checkouts'])
        expect(before[table], table).toBeGreaterThan(0);
      expect((await s.api.get('/test_clock')).body.test_clock.now).not.toBe(REAL_NOW);

      const reset = await s.api.post('/test_clock/reset', undefined, { 'idempotency-key': 'clean-start' });
      expect(reset.status, reset.text).toBe(200);
      expect(reset.body).toEqual({
        test_clock: { now: REAL_NOW, offset_seconds: 0, time_zone: 'UTC' },
        deleted: {
          customers: before.customers,
          subscriptions: 2,
          transactions: before.transactions,
          products: 1,
          plans: before.plans,
          cards: before.cards,
          notifications: before.events,
          emails: before.emails,
        },
      });

      // Nothing of the shop is left but the shop itself and the reset's own stored answer.
      const after = await rowsOf(s.shop.shop.id);
      for (const [table, n] of Object.entries(after))
        expect(n, table).toBe(
          table === 'idempotency_keys' ? 1 : table === 'cabinet_sessions' ? before[table] : 0,
        );
      expect((await s.api.get('/test_clock')).body.test_clock).toEqual({
        now: REAL_NOW,
        offset_seconds: 0,
        time_zone: 'UTC',
      });
      for (const list of [
        '/subscriptions',
        '/customers',
        '/products',
        '/plans',
        '/notifications',
        '/emails',
      ]) {
        const res = await s.api.get(list);
        expect(res.status, `${list}: ${res.text}`).toBe(200);
        const items = Array.isArray(res.body) ? res.body : Object.values(res.body).find(Array.isArray);
        expect(items, `${list}: ${res.text}`).toEqual([]);
      }
      expect((await s.api.get('/v2/transactions/tracking_id/order-7')).body.transactions).toEqual([]);

      // As a new shop: the same card is charged again (no duplicate check remembers it), billed from now.
      const fresh = await subscribe(s);
      expect(fresh).toMatchObject({
        state: 'active',
        paid_billing_cycles: 1,
        created_at: REAL_NOW,
        renew_at: '2026-02-01T00:00:00.000Z',
      });
      const again = await s.api.post(
        '/transactions/payments',
        {
          request: {
            amount: 1000,
            currency: 'EUR',
            description: 'Order 7',
            tracking_id: 'order-7',
            credit_card: card(),
          },
        },
        { 'idempotency-key': 'pay-order-7' },
      );
      expect(again.body.transaction?.status, again.text).toBe('successful');
      expect(again.body.transaction.created_at).toBe(REAL_NOW);
      // A retry of the reset replays its answer and deletes nothing more.
      const retried = await s.api.post('/test_clock/reset', undefined, { 'idempotency-key': 'clean-start' });
      expect(retried.body).toEqual(reset.body);
      expect((await s.api.get(`/subscriptions/${fresh.id}`)).status).toBe(200);

      // The other shop is untouched: its rows and its clock.
      expect(await rowsOf(other.shop.shop.id)).toEqual(otherBefore);
      expect((await other.api.get('/test_clock')).body).toEqual(otherClock);
    }));

  it('refuses a live shop with a 403 in the contract shape, touching nothing', async () => {
    const live = await newShop(h, { test: false });
    const api = client(h, live);
    expect((await api.post('/customers', { email: 'kept@example.com', ip: '203.0.113.9' })).status).toBe(201);
    const before = await rowsOf(live.shop.id);
    const res = await api.post('/test_clock/reset');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      message:
        "Only a test shop can be reset: a live shop's customers, subscriptions and payments are never deleted",
      errors: {
        base: [
          "Only a test shop can be reset: a live shop's customers, subscriptions and payments are never deleted",
        ],
      },
    });
    expect(await rowsOf(live.shop.id)).toEqual(before);
  });

  it("keeps the store's guards: a parent row goes only in a test shop's declared reset", async () => {
    const live = await newShop(h, { test: false });
    const test = await newShop(h);
    for (const shop of [live, test])
      expect(
        (await client(h, shop).post('/customers', { email: 'g@example.com', ip: '203.0.113.9' })).status,
      ).toBe(201);
    const refused = async (shopId: number, declared: number | undefined) => {
      const err = await h.db
        .tx(async (tx) => {
          if (declared !== undefined)
            await tx.query("SELECT set_config('kopek.reset_shop', $1, true)", [String(declared)]);
          await tx.query('DELETE FROM customers WHERE shop_id = $1', [shopId]);
        })
        .then(
          () => undefined,
          (e: { code?: string }) => e.code,
        );
      return err;
    };
    expect(await refused(test.shop.id, undefined)).toBe('23001');
    expect(await refused(test.shop.id, live.shop.id)).toBe('23001');
    expect(await refused(live.shop.id, live.shop.id)).toBe('23001');
    expect(await refused(test.shop.id, test.shop.id)).toBeUndefined();
  });

  it('needs the shop to sign in', async () => {
    const res = await client(h, undefined).post('/test_clock/reset');
    expect(res.status).toBe(401);
  });
});
