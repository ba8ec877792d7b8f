import { describe, expect, it, vi } from 'vitest';
import { chargeDescription, claimCharge, returnUrlWithId } from '../../src/charging/index.js';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { threeDSecureStep } from '../../src/gateway/three-ds.js';
import { findPlanOfShop } from '../../src/plans/service.js';
import { takeFirstCharge } from '../../src/subscriptions/charge.js';
import { findSubscription } from '../../src/subscriptions/repository.js';
import { updateStatement, withChange } from '../../src/subscriptions/state.js';
import { card, cardBody, monthly, paymentsOf, subShop } from './helpers.js';

describe('subscriptions: the first charge', () => {
  it('a payment the gateway refuses outright leaves a failed, cancelled subscription, never a stuck one', async () => {
    const s = await subShop();
    const ctx = { ...s.h, log: s.h.app.log, shop: s.shop.shop };
    // A free trial stores the card without charging; its first charge is then taken by hand with a
    // currency the gateway does not accept, the seed's example of a first charge that errors.
    const created = await s.api.post(
      '/subscriptions',
      cardBody({ plan: monthly({ trial: { amount: 0, interval: 1, interval_unit: 'day' } }) }),
    );
    const now = s.h.clock.now();
    await claimCharge(
      s.h.db,
      {
        shopId: s.shop.shop.id,
        subscriptionId: created.body.id,
        period: 1,
        attempt: 1,
        amount: 1999,
        currency: 'EUR',
      },
      now,
    );
    const stored = await findSubscription(s.h.db, s.shop.shop.id, created.body.id);
    if (!stored) throw new Error('subscription missing');
    const row = withChange(stored, { state: 'processing' }, stored.created_at, now);
    await s.h.db.query(updateStatement([row]));
    const plan = await findPlanOfShop(ctx, created.body.plan.id);
    if (!plan) throw new Error('plan missing');

    const after = await takeFirstCharge(
      ctx,
      row,
      { ...plan, currency: 'XYZ' },
      { period: 1, amount: 1999 },
      undefined,
    );
    expect(after).toMatchObject({
      state: 'failed',
      cancel_reason: 'First payment refused by the gateway: Currency is invalid',
      cancelled_at: now,
      renew_at: null,
      number_failed_payment_attempts: 1,
    });
    const [charge] = await s.h.db.query<{ status: string }>(
      'SELECT status FROM subscription_charges WHERE subscription_id = $1',
      [created.body.id],
    );
    expect(charge?.status).toBe('error');
    expect(await paymentsOf(s.h, s.shop)).toEqual([]);
    expect((await s.api.get(`/subscriptions/${created.body.id}`)).body.state).toBe('failed');
  });

  it('applies the shop’s CVC rejection codes to the first charge', async () => {
    const s = await subShop();
    const res = await s.api.post(
      '/subscriptions',
      cardBody({
        card: card(undefined, { verification_value: '222' }),
        avs_cvc_verification: { cvc_verification: { rejection_codes: ['N'] } },
      }),
    );
    expect(res.body).toMatchObject({
      state: 'failed',
      last_transaction: { status: 'failed', message: 'Payment was declined by AVS/CVC verification' },
    });
    const skipped = await s.api.post(
      '/subscriptions',
      cardBody({
        card: card(undefined, { verification_value: '222' }),
        avs_cvc_verification: { cvc_verification: { skip_verification: true, rejection_codes: ['N'] } },
      }),
    );
    expect(skipped.body.state).toBe('active');
  });

  it('refuses a malformed avs_cvc_verification before anything is written', async () => {
    const s = await subShop();
    const res = await s.api.post(
      '/subscriptions',
      cardBody({
        avs_cvc_verification: {
          avs_verification: 'no',
          cvc_verification: { skip_verification: 'yes', rejection_codes: 'N' },
        },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message:
        'Avs cvc verification avs verification must be an object, Avs cvc verification cvc verification skip verification must be true or false, and Avs cvc verification cvc verification rejection codes must be an array of strings',
      errors: {
        avs_cvc_verification: {
          avs_verification: ['must be an object'],
          cvc_verification: {
            skip_verification: ['must be true or false'],
            rejection_codes: ['must be an array of strings'],
          },
        },
      },
    });
    expect(await paymentsOf(s.h, s.shop)).toEqual([]);
  });

  it('sends the cardholder back from 3-D Secure to return_url with the subscription id', async () => {
    const s = await subShop({ threeDs: true });
    const res = await s.api.post(
      '/subscriptions',
      cardBody({ card: card('4012000000001097'), return_url: 'https://shop.example/back?order=7#top' }),
    );
    const step = await threeDSecureStep(s.h, res.body.last_transaction.uid);
    expect(step?.returnUrl).toBe(`https://shop.example/back?order=7&id=${res.body.id}#top`);
    // The subscription itself answers the URL as the shop gave it.
    expect((await findSubscription(s.h.db, s.shop.shop.id, res.body.id))?.return_url).toBe(
      'https://shop.example/back?order=7#top',
    );
  });
});

describe('subscriptions: cancelling with a charge still open', () => {
  it('cancels even when the gateway cannot say how the open charge ended', async () => {
    const s = await subShop();
    const created = await s.api.post('/subscriptions', cardBody({ card: card(KOPEK_CARDS.timeout) }));
    expect(created.status, created.text).toBe(201);
    const unreachable = new Error('the gateway does not answer');
    const spies = [
      vi.spyOn(InProcessGatewayClient.prototype, 'query').mockRejectedValue(unreachable),
      vi.spyOn(InProcessGatewayClient.prototype, 'queryByTrackingId').mockRejectedValue(unreachable),
    ];
    try {
      const res = await s.api.post(`/subscriptions/${created.body.id}/cancel`, {
        cancel_reason: 'moved away',
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ state: 'canceled', cancel_reason: 'moved away' });
      expect(spies.some((spy) => spy.mock.calls.length > 0)).toBe(true);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});

describe('subscriptions: charge helpers', () => {
  it.each([
    ['https://shop.example/back', 'https://shop.example/back?id=sbs_1'],
    ['https://shop.example/back?', 'https://shop.example/back?id=sbs_1'],
    ['https://shop.example/back?a=1', 'https://shop.example/back?a=1&id=sbs_1'],
    ['https://shop.example/back?a=1&', 'https://shop.example/back?a=1&id=sbs_1'],
    ['https://shop.example/back#frag', 'https://shop.example/back?id=sbs_1#frag'],
  ])('return_url %s becomes %s', (url, expected) => {
    expect(returnUrlWithId(url, 'sbs_1')).toBe(expected);
  });

  it('keeps a payment description within 255 characters without splitting a character', () => {
    const id = 'sbs_AAAAAAAAAAAAAAAAAAAAAAAA';
    expect(chargeDescription('Gold', id)).toBe(`Gold (subscription ${id})`);
    const long = chargeDescription('T'.repeat(255), id);
    expect(long).toHaveLength(255);
    expect(long.endsWith(`…${` (subscription ${id})`}`)).toBe(true);
    const emoji = chargeDescription(`a${'😀'.repeat(127)}`, id);
    expect(emoji.length).toBeLessThanOrEqual(255);
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
