import { describe, expect, it } from 'vitest';
import { sweepExpiredCheckouts } from '../../src/checkout/expiry.js';
import { CHECKOUT_TTL_MS } from '../../src/pages/checkout-url.js';
import { withClock } from '../harness.js';
import { monthly, subShop } from '../subscriptions/helpers.js';

/**
 * The expiry sweep locks the pages it claims, then their subscriptions; a cancel locks the
 * subscription, then closes its pages. Were the sweep to wait for a subscription a cancel holds,
 * each would wait for the other. The sweep leaves a busy subscription's page to a later sweep
 * instead. PostgreSQL only: the embedded store has one connection, so two transactions never overlap.
 */
describe.skipIf(!process.env.DATABASE_URL)(
  'the checkout expiry sweep and a subscription held by another request',
  () => {
    it('leaves the page of a subscription another transaction holds for a later sweep, without waiting', async () => {
      const s = await subShop();
      const created = await s.api.post('/subscriptions', {
        plan: monthly(),
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      const deps = { db: s.h.db, clock: s.h.clock, config: s.h.config };
      const announced = () =>
        s.h.db.query<{ at: Date | null }>(
          'SELECT expiry_announced_at AS at FROM checkouts WHERE subscription_id = $1',
          [id],
        );

      await withClock(s.h, CHECKOUT_TTL_MS + 1000, async () => {
        let release!: () => void;
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let locked!: () => void;
        const isLocked = new Promise<void>((resolve) => {
          locked = resolve;
        });
        // Another request holds the subscription, as a cancel does before it closes the page.
        const holder = s.h.db.tx(async (tx) => {
          await tx.query('SELECT id FROM subscriptions WHERE id = $1 FOR UPDATE', [id]);
          locked();
          await released;
        });
        await isLocked;
        // Returns while the subscription is held: the page is left, not announced.
        await sweepExpiredCheckouts(deps, s.shop.shop.id);
        expect(await announced()).toEqual([{ at: null }]);
        release();
        await holder;

        await sweepExpiredCheckouts(deps, s.shop.shop.id);
        expect((await announced())[0]?.at).not.toBeNull();
      });
      const after = await s.api.get(`/subscriptions/${id}`);
      expect(after.body.state).toBe('canceled');
    });
  },
);
