import { beforeAll, describe, expect, it } from 'vitest';
import { signedIn } from '../cabinet/session.js';
import type { Harness } from '../harness.js';
import { harness } from '../harness.js';
import { advance, frozen, monthly, setup } from '../test-clock/support.js';

/**
 * decisions.md, Test clock: an advance runs everything that falls due on the way, expiries included.
 * A test shop's unpaid checkout tokens (the checkout API's and a redirect subscription's page) are
 * announced when its clock passes their expiry, at that instant, in order with its renewals, once.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const eventsOf = (shopId: number) =>
  h.db.query<{ event: string; resource_id: string; created_at: Date; payload: any }>(
    'SELECT event, resource_id, created_at, payload FROM events WHERE shop_id = $1 ORDER BY id',
    [shopId],
  );

async function openCtp(s: Awaited<ReturnType<typeof setup>>, expiresAt?: string) {
  const res = await s.api.post('/ctp/api/checkouts', {
    checkout: {
      transaction_type: 'payment',
      order: {
        amount: 500,
        currency: 'USD',
        description: 'Order #9',
        ...(expiresAt ? { expired_at: expiresAt } : {}),
      },
      settings: { notification_url: 'https://shop.example/hook', language: 'en' },
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.checkout.token as string;
}

describe('the test clock runs checkout expiries', () => {
  it('announces unpaid tokens as the clock passes them, at their expiry, once', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const ctp = await openCtp(s);
      const sub = await s.api.post('/subscriptions', {
        plan: monthly(),
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
        notification_url: 'https://shop.example/subs',
      });
      expect(sub.status, sub.text).toBe(201);
      const expiresAt = '2026-01-02T00:00:00.000Z';

      // Not yet: an hour short of the expiry announces nothing.
      const before = await advance(s, { by: 'PT23H' });
      expect(before.expired_checkouts).toBe(0);
      expect((await s.api.get(`/ctp/api/checkouts/${ctp}`)).body.checkout.expired).toBe(false);

      const done = await advance(s, { by: 'P2D' });
      expect(done.expired_checkouts).toBe(2);
      const events = (await eventsOf(s.shop.shop.id)).filter((e) => e.event !== 'created.subscription');
      expect(events.map((e) => [e.event, e.resource_id, e.created_at.toISOString()])).toEqual(
        expect.arrayContaining([
          ['checkout_expired.subscription', sub.body.id, expiresAt],
          ['canceled.subscription', sub.body.id, expiresAt],
          ['expired.checkout', ctp, expiresAt],
        ]),
      );
      expect(events).toHaveLength(3);
      // The subscription nobody paid for ends at its page's expiry, and both events say so, in order.
      const ended = (await s.api.get(`/subscriptions/${sub.body.id}`)).body;
      expect(ended).toMatchObject({
        state: 'canceled',
        cancelled_at: expiresAt,
        cancel_reason: 'The payment page expired before the customer paid',
        renew_at: null,
      });
      const ofSub = events.filter((e) => e.resource_id === sub.body.id);
      expect(ofSub.map((e) => [e.event, e.payload.state])).toEqual([
        ['checkout_expired.subscription', 'canceled'],
        ['canceled.subscription', 'canceled'],
      ]);
      const cabinet = await (await signedIn(h, s.shop)).get(`/cabinet/subscriptions/${sub.body.id}`);
      expect(cabinet.status).toBe(200);
      expect(cabinet.body).toContain('The payment page expired before the customer paid');
      const ctpEvent = events.find((e) => e.event === 'expired.checkout');
      expect(ctpEvent?.payload.checkout).toMatchObject({
        token: ctp,
        status: 'error',
        message: 'Token is expired.',
        expired: true,
      });
      const got = (await s.api.get(`/ctp/api/checkouts/${ctp}`)).body.checkout;
      expect(got).toMatchObject({ expired: true, status: 'error', message: 'Token is expired.' });

      // Announced once: another advance finds nothing more.
      expect((await advance(s, { by: 'P1D' })).expired_checkouts).toBe(0);
      expect((await eventsOf(s.shop.shop.id)).filter((e) => e.event.includes('expired'))).toHaveLength(2);
    }));

  it("stops at each expiry in order with billing, and leaves other shops' tokens alone", () =>
    frozen(h, async () => {
      const s = await setup(h);
      const other = await setup(h);
      const early = await openCtp(s, '2026-01-01T06:00:00.000Z');
      const late = await openCtp(s, '2026-01-01T12:00:00.000Z');
      const theirs = await openCtp(other, '2026-01-01T06:00:00.000Z');
      const done = await advance(s, { to: '2026-01-01T09:00:00.000Z' });
      expect(done.expired_checkouts).toBe(1);
      expect(done.test_clock.now).toBe('2026-01-01T09:00:00.000Z');
      expect((await eventsOf(s.shop.shop.id)).map((e) => e.resource_id)).toEqual([early]);
      await advance(s, { to: '2026-01-01T13:00:00.000Z' });
      expect((await eventsOf(s.shop.shop.id)).map((e) => e.resource_id)).toEqual([early, late]);
      // The other shop's clock did not move: its token has not expired, and nothing was announced.
      expect((await eventsOf(other.shop.shop.id)).filter((e) => e.resource_id === theirs)).toEqual([]);
    }));
});
