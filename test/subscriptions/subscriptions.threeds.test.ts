import { describe, expect, it } from 'vitest';
import { completeThreeDSecure } from '../../src/gateway/three-ds.js';
import { settleSubscriptionOfTransaction } from '../../src/subscriptions/settle.js';
import { TEST_PUBLIC_URL } from '../harness.js';
import { addMonthsIso, card, cardBody, monthly, paymentsOf, type SubShop, subShop } from './helpers.js';

const CHALLENGE = '4012000000001097';
const services = (s: SubShop) => ({ ...s.h, log: s.h.app.log });

/** A subscription of a 3-D Secure shop waiting for the cardholder. */
async function waiting(number = CHALLENGE, extra: Record<string, unknown> = {}) {
  const s = await subShop({ threeDs: true });
  const res = await s.api.post(
    '/subscriptions',
    cardBody({ card: card(number), return_url: 'https://shop.example/back', ...extra }),
  );
  expect(res.status).toBe(201);
  return { s, sub: res.body, uid: res.body.last_transaction.uid as string };
}

describe('subscriptions: 3-D Secure', () => {
  it('answers redirecting with an incomplete last_transaction that carries the redirect_url', async () => {
    const { s, sub, uid } = await waiting();
    const now = s.h.clock.now().toISOString();
    expect(sub).toMatchObject({
      state: 'redirecting',
      renew_at: null,
      active_to: null,
      paid_billing_cycles: 0,
      last_transaction: {
        uid,
        status: 'incomplete',
        message: null,
        created_at: now,
        redirect_url: `${TEST_PUBLIC_URL}/process/${uid}`,
      },
    });
    // Not the redirect variant: the card is known, there is no hosted checkout.
    expect(sub.redirect_url).toBeUndefined();
    expect(sub.token).toBeUndefined();
    expect(sub.card.last_4).toBe('1097');
    expect(await paymentsOf(s.h, s.shop)).toMatchObject([{ uid, status: 'incomplete', amount: 1999 }]);
    // Reading it before the cardholder acts changes nothing.
    expect((await s.api.get(`/subscriptions/${sub.id}`)).body).toEqual(sub);
  });

  it('becomes active when the challenge is passed and the gateway step settles it', async () => {
    const { s, sub, uid } = await waiting();
    await completeThreeDSecure(s.h, uid, 'passed');
    await settleSubscriptionOfTransaction(services(s), uid);
    const now = s.h.clock.now().toISOString();
    const res = await s.api.get(`/subscriptions/${sub.id}`);
    expect(res.body).toEqual({
      ...sub,
      state: 'active',
      updated_at: now,
      paid_billing_cycles: 1,
      renew_at: addMonthsIso(sub.created_at, 1),
      active_to: addMonthsIso(sub.created_at, 1),
      last_transaction: { uid, status: 'successful', message: 'Successfully processed', created_at: now },
    });
    // Settling twice is harmless.
    await settleSubscriptionOfTransaction(services(s), uid);
    expect((await s.api.get(`/subscriptions/${sub.id}`)).body).toEqual(res.body);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
  });

  it('is settled by a read alone when the gateway step did not report back', async () => {
    const { s, sub, uid } = await waiting();
    await completeThreeDSecure(s.h, uid, 'passed');
    const res = await s.api.get(`/subscriptions/${sub.id}`);
    expect(res.body).toMatchObject({
      state: 'active',
      paid_billing_cycles: 1,
      last_transaction: { uid, status: 'successful' },
    });
  });

  it('fails and is cancelled when the cardholder fails the challenge', async () => {
    const { s, sub, uid } = await waiting();
    await completeThreeDSecure(s.h, uid, 'failed');
    await settleSubscriptionOfTransaction(services(s), uid);
    const res = await s.api.get(`/subscriptions/${sub.id}`);
    expect(res.body).toMatchObject({
      state: 'failed',
      number_failed_payment_attempts: 1,
      last_transaction: { uid, status: 'failed', message: '3-D Secure authentication failed' },
      cancel_reason: 'First payment failed: 3-D Secure authentication failed',
      cancelled_at: expect.any(String),
    });
    expect(res.body.last_transaction.redirect_url).toBeUndefined();
  });

  it.each([
    ['4012000000001006', 'active'],
    ['4012000000001030', 'failed'],
  ])('frictionless card %s ends %s once the step completes', async (number, state) => {
    const { s, sub, uid } = await waiting(number);
    expect(sub.state).toBe('redirecting');
    await completeThreeDSecure(s.h, uid, 'passed');
    await settleSubscriptionOfTransaction(services(s), uid);
    expect((await s.api.get(`/subscriptions/${sub.id}`)).body.state).toBe(state);
  });

  it('charges a card not enrolled in 3-D Secure at once', async () => {
    const s = await subShop({ threeDs: true });
    const res = await s.api.post('/subscriptions', cardBody());
    expect(res.body).toMatchObject({ state: 'active', last_transaction: { status: 'successful' } });
    expect(res.body.last_transaction.redirect_url).toBeUndefined();
  });

  it('a paid trial behind 3-D Secure becomes trial when passed', async () => {
    const plan = monthly({ trial: { amount: 50, interval: 7, interval_unit: 'day' } });
    const { s, sub, uid } = await waiting(CHALLENGE, { plan });
    expect(sub).toMatchObject({ state: 'redirecting', last_transaction: { status: 'incomplete' } });
    await completeThreeDSecure(s.h, uid, 'passed');
    await settleSubscriptionOfTransaction(services(s), uid);
    const res = await s.api.get(`/subscriptions/${sub.id}`);
    // The trial runs its 7 days from the start; renew_at was hidden while the charge was in flight.
    expect(sub.renew_at).toBeNull();
    expect(res.body).toMatchObject({
      state: 'trial',
      paid_billing_cycles: 0,
      renew_at: new Date(Date.parse(sub.created_at) + 7 * 24 * 3600_000).toISOString(),
      last_transaction: { status: 'successful' },
    });
  });

  it('a subscription cancelled while waiting ends the step: the cardholder can no longer pay', async () => {
    const { s, sub, uid } = await waiting();
    const cancelled = await s.api.post(`/subscriptions/${sub.id}/cancel`, {
      cancel_reason: 'Changed my mind',
    });
    const ended = { uid, status: 'failed', message: 'This payment was cancelled by the shop' };
    expect(cancelled.body).toMatchObject({ state: 'canceled', paid_billing_cycles: 0, transaction: ended });
    await expect(completeThreeDSecure(s.h, uid, 'passed')).rejects.toMatchObject({ code: 'conflict' });
    await settleSubscriptionOfTransaction(services(s), uid);
    const res = await s.api.get(`/subscriptions/${sub.id}`);
    expect(res.body).toMatchObject({
      state: 'canceled',
      renew_at: null,
      paid_billing_cycles: 0,
      active_to: null,
      cancel_reason: 'Changed my mind',
      last_transaction: ended,
      transaction: ended,
    });
    expect((await paymentsOf(s.h, s.shop)).map((p) => p.status)).toEqual(['failed']);
  });

  it('ignores transactions that belong to no subscription', async () => {
    const s = await subShop({ threeDs: true });
    await expect(
      settleSubscriptionOfTransaction(services(s), '00000000-0000-4000-8000-000000000000'),
    ).resolves.toBeUndefined();
  });
});
