import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { type Harness, harness, newShop } from '../harness.js';
import { frozen, monthly, REAL_NOW } from './support.js';

/**
 * Two instances of Kopek on one store, as behind a load balancer: a test clock advanced through one
 * is the clock of the very next request the other serves, though each keeps its shops cached. Found
 * by the soak (bench/soak.ts): a cancellation served by the other instance within its cache's few
 * seconds was dated in the shop's past, before renewals the advance had already charged.
 */

let h: Harness;
let other: App;

beforeAll(async () => {
  h = await harness();
  // No API budget of its own: in one process it would share the first app's (a memory store leases
  // the whole budget to its one app), which no deployment does.
  other = await buildApp({ ...h.app.services, config: { ...h.app.services.config, apiRateLimit: null } });
  await other.ready();
});

afterAll(async () => {
  await other.close();
});

async function call(app: App, auth: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

describe('a test clock advanced on one instance', () => {
  it('is the clock of the next request on another instance that has the shop cached', () =>
    frozen(h, async () => {
      const shop = await newShop(h);
      const created = await call(other, shop.auth, 'POST', '/subscriptions', {
        plan: monthly(),
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
        card: {
          number: '4200000000000000',
          verification_value: '123',
          holder: 'JANE DOE',
          exp_month: '12',
          exp_year: '2035',
        },
      });
      expect(created.status).toBe(201);
      // The other instance has the shop cached now; the clock moves on through the first one.
      const advanced = await call(h.app, shop.auth, 'POST', '/test_clock/advance', { by: 'P2M' });
      expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
      expect(advanced.body.billing).toMatchObject({ charged: 2, successful: 2 });
      const shopNow = new Date(advanced.body.test_clock.now);
      expect(shopNow.getTime()).toBeGreaterThan(new Date(REAL_NOW).getTime());

      const canceled = await call(other, shop.auth, 'POST', `/subscriptions/${created.body.id}/cancel`, {
        cancel_reason: 'Moving away',
      });
      expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
      const [row] = await h.db.query<{ cancelled_at: Date; last_paid: Date }>(
        `SELECT s.cancelled_at, (SELECT max(t.created_at) FROM transactions t
           WHERE t.shop_id = s.shop_id AND t.tracking_id LIKE s.id || '-%') AS last_paid
         FROM subscriptions s WHERE s.id = $1`,
        [created.body.id],
      );
      expect(row?.cancelled_at.getTime()).toBe(shopNow.getTime());
      expect(row?.cancelled_at.getTime()).toBeGreaterThanOrEqual(row?.last_paid.getTime() ?? Infinity);
      const clock = await call(other, shop.auth, 'GET', '/test_clock');
      expect(clock.body.test_clock.now).toBe(advanced.body.test_clock.now);
    }));
});
