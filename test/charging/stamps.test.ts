import { beforeAll, describe, expect, it } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import type { Clock } from '../../src/clock.js';
import { type Services, shopCtx } from '../../src/context.js';
import { gatewayClient } from '../../src/gateway/client.js';
import { cancelSubscription, createSubscription } from '../../src/subscriptions/service.js';
import { type Harness, harness, newShop } from '../harness.js';
import { cardBody, card as subscriptionCard } from '../subscriptions/helpers.js';

/**
 * A clock that moves on by a millisecond at every reading, as the wall clock does between the
 * statements of one request: a charge decided in one batch with its subscription's change must be
 * stamped at the instant of that change, never after the cancellation its own decline caused
 * (the soak, bench/soak.ts, found payments 1–40 ms after their subscription's cancelled_at).
 */
function tickingClock(start: Date): Clock {
  let ms = start.getTime();
  return {
    now: () => {
      ms += 1;
      return new Date(ms);
    },
  };
}

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

async function paymentsAfterCancel(subscriptionId: string) {
  return h.db.query<{ tracking_id: string }>(
    `SELECT t.tracking_id FROM transactions t JOIN subscriptions s ON t.tracking_id LIKE s.id || '-%'
     WHERE s.id = $1 AND t.type = 'payment' AND t.created_at > s.cancelled_at`,
    [subscriptionId],
  );
}

describe('a charge decided with its subscription is stamped with the change it causes', () => {
  it('a declined first charge: the payment is not after the cancellation', async () => {
    const shop = await newShop(h);
    const services: Services = { ...h.app.services, clock: tickingClock(h.clock.now()) };
    const ctx = shopCtx(services, shop.shop);
    const sub = await createSubscription(ctx, cardBody({ card: subscriptionCard('4005550000000019') }));
    expect(sub.state).toBe('failed');
    expect(await paymentsAfterCancel(sub.id)).toEqual([]);
  });

  it('a renewal declined for the last time: the payment is not after the cancellation', async () => {
    const shop = await newShop(h);
    const ctx = shopCtx(h.app.services, shop.shop);
    const daily = { amount: 100, interval: 1, interval_unit: 'day' };
    const plan = { title: 'Daily', currency: 'EUR', plan: daily, number_payment_attempts: 1 };
    const created = await createSubscription(ctx, cardBody({ plan }));
    expect(created.state).toBe('active');
    // The renewal goes to a card that declines (by SQL: the API has no card change).
    const declining = await gatewayClient(ctx).tokenize({
      number: '4005550000000019',
      holder: 'JANE DOE',
      exp_month: '12',
      exp_year: '2035',
    });
    await h.db.query('UPDATE subscriptions SET card_token = $2 WHERE id = $1', [created.id, declining.token]);
    const services: Services = {
      ...h.app.services,
      clock: tickingClock(new Date(h.clock.now().getTime() + 2 * 86_400_000)),
    };
    const summary = await billDue(services, { shopId: shop.shop.id });
    expect(summary).toMatchObject({ charged: 1, failed: 1 });
    const [row] = await h.db.query<{ state: string }>('SELECT state FROM subscriptions WHERE id = $1', [
      created.id,
    ]);
    expect(row?.state).toBe('failed');
    expect(await paymentsAfterCancel(created.id)).toEqual([]);
  });

  it('a change made on a clock behind the subscription (another host, a stale test clock) is not dated before its last change', async () => {
    const shop = await newShop(h);
    const ctx = shopCtx(h.app.services, shop.shop);
    const created = await createSubscription(ctx, cardBody());
    const [before] = await h.db.query<{ updated_at: Date }>(
      'SELECT updated_at FROM subscriptions WHERE id = $1',
      [created.id],
    );
    // An instance whose clock reads an hour earlier than the one that made the last change.
    const behind = { now: () => new Date(h.clock.now().getTime() - 3_600_000) };
    const canceled = await cancelSubscription({ ...ctx, clock: behind }, created.id, {
      cancel_reason: 'Skewed',
    });
    expect(canceled.state).toBe('canceled');
    const [row] = await h.db.query<{ cancelled_at: Date; updated_at: Date }>(
      'SELECT cancelled_at, updated_at FROM subscriptions WHERE id = $1',
      [created.id],
    );
    expect(row?.cancelled_at.getTime()).toBe(before?.updated_at.getTime());
    const events = await h.db.query<{ event: string; created_at: Date }>(
      "SELECT event, created_at FROM events WHERE resource_type = 'subscription' AND resource_id = $1 ORDER BY id",
      [created.id],
    );
    const times = events.map((e) => e.created_at.getTime());
    expect(events.map((e) => e.event)).toEqual([
      'created.subscription',
      'activated.subscription',
      'canceled.subscription',
    ]);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});
