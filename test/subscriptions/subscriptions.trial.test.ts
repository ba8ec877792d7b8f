import { beforeAll, describe, expect, it } from 'vitest';
import { addInterval } from '../../src/calendar/interval.js';
import { findPlanOfShop } from '../../src/plans/service.js';
import { findSubscription } from '../../src/subscriptions/repository.js';
import { periodEnd } from '../../src/subscriptions/schedule.js';
import { atTime, card, cardBody, monthly, paymentsOf, planView, type SubShop, subShop } from './helpers.js';

let s: SubShop;

beforeAll(async () => {
  s = await subShop();
});

const withTrial = (trial: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  monthly({ trial: { interval: 14, interval_unit: 'day', ...trial }, ...extra });

const DAY = 86_400_000;

describe('subscriptions: trials', () => {
  it('free trial: state trial, nothing charged, renews when the trial ends', async () => {
    const own = await subShop();
    const now = own.h.clock.now();
    const res = await own.api.post('/subscriptions', cardBody({ plan: withTrial({ amount: 0 }) }));
    expect(res.status).toBe(201);
    const trialEnd = new Date(now.getTime() + 14 * DAY).toISOString();
    expect(res.body).toMatchObject({
      state: 'trial',
      renew_at: trialEnd,
      active_to: trialEnd,
      paid_billing_cycles: 0,
      number_failed_payment_attempts: 0,
      last_transaction: null,
      plan: planView(own.shop.shop.id, {
        trial: { amount: 0, interval: 14, interval_unit: 'day', as_first_payment: false },
      }),
    });
    expect(res.body.card.token).toEqual(expect.any(String));
    expect(await paymentsOf(own.h, own.shop)).toEqual([]);
    expect((await own.api.get(`/subscriptions/${res.body.id}`)).body).toEqual(res.body);
  });

  it('paid trial: the trial amount is charged now and the state is trial', async () => {
    const own = await subShop();
    const now = own.h.clock.now();
    const res = await own.api.post(
      '/subscriptions',
      cardBody({ plan: withTrial({ amount: 100, as_first_payment: true }) }),
    );
    expect(res.status).toBe(201);
    const payments = await paymentsOf(own.h, own.shop);
    expect(payments).toEqual([
      {
        uid: expect.any(String),
        amount: 100,
        currency: 'EUR',
        status: 'successful',
        tracking_id: `${res.body.id}-0`,
      },
    ]);
    const trialEnd = new Date(now.getTime() + 14 * DAY).toISOString();
    expect(res.body).toMatchObject({
      state: 'trial',
      renew_at: trialEnd,
      active_to: trialEnd,
      paid_billing_cycles: 0,
      last_transaction: { uid: payments[0]?.uid, status: 'successful', message: 'Successfully processed' },
    });
    expect(res.body.plan.trial).toEqual({
      amount: 100,
      interval: 14,
      interval_unit: 'day',
      as_first_payment: true,
    });
  });

  it('paid trial declined: failed and cancelled', async () => {
    const res = await s.api.post(
      '/subscriptions',
      cardBody({ plan: withTrial({ amount: 100 }), card: card('4005550000000019') }),
    );
    expect(res.body).toMatchObject({
      state: 'failed',
      renew_at: null,
      active_to: null,
      number_failed_payment_attempts: 1,
      last_transaction: { status: 'failed', message: 'Payment was declined' },
      cancel_reason: 'First payment failed: Payment was declined',
      cancelled_at: expect.any(String),
    });
  });

  it('a trial of a redirect subscription waits for the card like any other', async () => {
    const res = await s.api.post('/subscriptions', { plan: withTrial({ amount: 0 }) });
    expect(res.body).toMatchObject({ state: 'redirecting', renew_at: null, active_to: null, card: {} });
  });

  it('a free trial can be cancelled', async () => {
    const created = await s.api.post('/subscriptions', cardBody({ plan: withTrial({ amount: 0 }) }));
    const res = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'Not for me' });
    expect(res.body).toMatchObject({
      state: 'canceled',
      renew_at: null,
      cancel_reason: 'Not for me',
      transaction: null,
    });
  });
});

describe('subscriptions: dates at the end of a month', () => {
  it('Jan 31 renews on Feb 28, then Mar 31 and Apr 30 (2026)', async () => {
    await atTime(s.h, '2026-01-31T09:30:00.000Z', async () => {
      const res = await s.api.post('/subscriptions', cardBody());
      expect(res.body).toMatchObject({
        state: 'active',
        renew_at: '2026-02-28T09:30:00.000Z',
        active_to: '2026-02-28T09:30:00.000Z',
      });
      const ctx = { ...s.h, log: s.h.app.log, shop: s.shop.shop };
      const row = await findSubscription(s.h.db, s.shop.shop.id, res.body.id);
      const plan = await findPlanOfShop(ctx, res.body.plan.id);
      if (!row || !plan) throw new Error('subscription or plan missing');
      expect([2, 3].map((n) => periodEnd(row, plan, n).toISOString())).toEqual([
        '2026-03-31T09:30:00.000Z',
        '2026-04-30T09:30:00.000Z',
      ]);
    });
  });

  it('Jan 31 of a leap year renews on Feb 29', async () => {
    await atTime(s.h, '2028-01-31T00:00:00.000Z', async () => {
      const res = await s.api.post(
        '/subscriptions',
        cardBody({ card: card(undefined, { exp_year: '2031' }) }),
      );
      expect(res.body.renew_at).toBe('2028-02-29T00:00:00.000Z');
    });
  });

  it('a monthly trial from Jan 31 ends Feb 28, and the regular months keep the 31st', async () => {
    await atTime(s.h, '2026-01-31T12:00:00.000Z', async () => {
      const res = await s.api.post(
        '/subscriptions',
        cardBody({ plan: withTrial({ amount: 0, interval: 1, interval_unit: 'month' }) }),
      );
      expect(res.body).toMatchObject({ state: 'trial', renew_at: '2026-02-28T12:00:00.000Z' });
      const ctx = { ...s.h, log: s.h.app.log, shop: s.shop.shop };
      const row = await findSubscription(s.h.db, s.shop.shop.id, res.body.id);
      const plan = await findPlanOfShop(ctx, res.body.plan.id);
      if (!row || !plan) throw new Error('subscription or plan missing');
      expect([1, 2].map((n) => periodEnd(row, plan, n).toISOString())).toEqual([
        '2026-03-31T12:00:00.000Z',
        '2026-04-30T12:00:00.000Z',
      ]);
    });
  });

  it.each([
    ['hour', 36],
    ['day', 10],
    ['week', 2],
    ['year', 1],
  ] as const)('renews after %s-based intervals', async (unit, interval) => {
    const now = s.h.clock.now();
    const res = await s.api.post(
      '/subscriptions',
      cardBody({ plan: monthly({ plan: { amount: 700, interval, interval_unit: unit } }) }),
    );
    const end = addInterval(now, interval, unit).toISOString();
    expect(res.body).toMatchObject({ state: 'active', renew_at: end, active_to: end });
  });
});
