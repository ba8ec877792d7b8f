import { beforeAll, describe, expect, it } from 'vitest';
import { card, cardBody, type SubShop, subShop } from './helpers.js';

/**
 * Card subscriptions created at the same moment commit together (db/grouped.ts): each one still has
 * exactly its own card, payment, plan, customer, charge record and events, in its own order, as a
 * create alone writes them.
 */

const HOOK = 'http://127.0.0.1:9/hook';
const COUNT = 24;
let s: SubShop;

beforeAll(async () => {
  s = await subShop();
});

describe('card subscriptions created at once', () => {
  it('each get their own rows, charged once, announced in order', async () => {
    const answers = await Promise.all(
      Array.from({ length: COUNT }, (_, i) =>
        s.api.post(
          '/subscriptions',
          cardBody({
            tracking_id: `together-${i}`,
            notification_url: HOOK,
            card: card('4200000000000000', { holder: `HOLDER ${i}` }),
          }),
        ),
      ),
    );
    for (const [i, res] of answers.entries()) {
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        state: 'active',
        tracking_id: `together-${i}`,
        paid_billing_cycles: 1,
      });
      expect(res.body.card.holder).toBe(`HOLDER ${i}`);
    }
    const ids = answers.map((r) => r.body.id as string);
    expect(new Set(ids).size).toBe(COUNT);

    for (const res of answers) {
      const sub = res.body;
      const charges = await s.h.db.query<{ period: number; status: string; transaction_uid: string }>(
        'SELECT period, status, transaction_uid FROM subscription_charges WHERE shop_id = $1 AND subscription_id = $2',
        [s.shop.shop.id, sub.id],
      );
      expect(charges).toEqual([
        { period: 1, status: 'successful', transaction_uid: sub.last_transaction.uid },
      ]);
      const [payment] = await s.h.db.query<{ status: string; amount: number; card: { holder: string } }>(
        'SELECT status, amount, card FROM transactions WHERE shop_id = $1 AND uid = $2',
        [s.shop.shop.id, sub.last_transaction.uid],
      );
      expect(payment).toMatchObject({
        status: 'successful',
        amount: 1999,
        card: { holder: sub.card.holder },
      });
      const [stored] = await s.h.db.query<{ plan_id: string; customer_id: string; card_token: string }>(
        'SELECT plan_id, customer_id, card_token FROM subscriptions WHERE shop_id = $1 AND id = $2',
        [s.shop.shop.id, sub.id],
      );
      expect(stored).toEqual({
        plan_id: sub.plan.id,
        customer_id: sub.customer.id,
        card_token: sub.card.token,
      });
      const [owned] = await s.h.db.query<{ plans: number; customers: number; cards: number }>(
        `SELECT (SELECT count(*)::int FROM plans WHERE shop_id = $1 AND id = $2) AS plans,
                (SELECT count(*)::int FROM customers WHERE shop_id = $1 AND id = $3) AS customers,
                (SELECT count(*)::int FROM cards WHERE shop_id = $1 AND token = $4) AS cards`,
        [s.shop.shop.id, sub.plan.id, sub.customer.id, sub.card.token],
      );
      expect(owned).toEqual({ plans: 1, customers: 1, cards: 1 });
      // The payment's event (kept, not sent: the charge request names no URL), then the
      // subscription's, created and then activated, each to be delivered.
      const events = await s.h.db.query<{ event: string; delivery: string | null }>(
        `SELECT e.event, d.status AS delivery FROM events e
         LEFT JOIN deliveries d ON d.shop_id = e.shop_id AND d.event_id = e.id
         WHERE e.shop_id = $1 AND e.resource_id IN ($2, $3) ORDER BY e.id`,
        [s.shop.shop.id, sub.id, sub.last_transaction.uid],
      );
      expect(events).toEqual([
        { event: 'successful.transaction', delivery: null },
        { event: 'created.subscription', delivery: 'pending' },
        { event: 'activated.subscription', delivery: 'pending' },
      ]);
    }
    const [{ n } = { n: 0 }] = await s.h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transactions WHERE shop_id = $1 AND type = 'payment'",
      [s.shop.shop.id],
    );
    expect(n).toBe(COUNT);
  });
});
