import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/core/errors.js';
import { TEST_CARDS } from '../../src/gateway/test-cards.js';
import { completeThreeDSecure, threeDSecureStep } from '../../src/gateway/three-ds.js';
import { harness } from '../harness.js';
import { card, gatewayShop } from './helpers.js';

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const enrolled = TEST_CARDS.flatMap((c) =>
  c.behaviour.kind === 'three_ds' ? [{ number: c.number, ...c.behaviour }] : [],
);

async function incomplete(number: string, type: 'payment' | 'authorization' = 'payment') {
  const g = await gatewayShop({ threeDs: true });
  const send = type === 'payment' ? g.pay : g.authorize;
  const res = await send({ credit_card: card(number), return_url: 'https://shop.example/done' });
  expect(res.body.transaction.status).toBe('incomplete');
  return { g, uid: res.body.transaction.uid as string };
}

describe('3-D Secure completion (the verbs behind /process/{uid})', () => {
  it.each(enrolled.map((c) => [c.number, c.flow, c.authentication]))(
    'card %s (%s, %s) passed: the card decides',
    async (number, _flow, authentication) => {
      const { g, uid } = await incomplete(number);
      const result = await completeThreeDSecure(g.h, uid, 'passed');
      const ok = authentication === 'Y' || authentication === 'A';
      expect(result.returnUrl).toBe('https://shop.example/done');
      expect(result.shopId).toBe(g.shop.shop.id);
      const t = result.transaction;
      expect(t.redirect_url).toBeUndefined();
      expect(t.three_d_secure_verification).toMatchObject({
        status: ok ? 'successful' : 'failed',
        ve_status: 'Y',
        pa_status: authentication,
        eci: expect.any(String),
      });
      if (ok) {
        expect(t).toMatchObject({
          status: 'successful',
          message: 'Successfully processed',
          paid_at: expect.any(String),
        });
        expect(t.payment).toMatchObject({ status: 'successful', message: 'Payment was approved' });
      } else {
        expect(t).toMatchObject({
          status: 'failed',
          message: '3-D Secure authentication failed',
          paid_at: null,
        });
      }
      const queried = await g.api.get(`/transactions/${uid}`);
      expect(queried.body.transaction).toEqual(t);
    },
  );

  it.each(enrolled.map((c) => c.number))(
    'card %s failed: the cardholder failed the challenge',
    async (number) => {
      const { g, uid } = await incomplete(number);
      const { transaction } = await completeThreeDSecure(g.h, uid, 'failed');
      expect(transaction).toMatchObject({ status: 'failed', message: '3-D Secure authentication failed' });
      expect(transaction.three_d_secure_verification).toMatchObject({ status: 'failed', pa_status: 'N' });
    },
  );

  it('gives scheme ECI values: Visa 05, Mastercard 02 for a full authentication', async () => {
    const visa = await incomplete('4012000000001006');
    expect(
      (await completeThreeDSecure(visa.g.h, visa.uid, 'passed')).transaction.three_d_secure_verification?.eci,
    ).toBe('05');
    const mc = await incomplete('5204240000015003');
    expect(
      (await completeThreeDSecure(mc.g.h, mc.uid, 'passed')).transaction.three_d_secure_verification?.eci,
    ).toBe('02');
  });

  it('describes the step for the page: the flow, the amount, the card and where to return', async () => {
    const { g, uid } = await incomplete('4012000000001097');
    expect(await threeDSecureStep(g.h, uid)).toEqual({
      uid,
      shopId: g.shop.shop.id,
      type: 'payment',
      status: 'incomplete',
      cancelledByShop: false,
      flow: 'challenge',
      amount: 1999,
      currency: 'EUR',
      description: 'Test order',
      language: 'en',
      card: { brand: 'visa', last_4: '1097' },
      returnUrl: 'https://shop.example/done',
      test: true,
    });
    expect((await threeDSecureStep(g.h, (await incomplete('4012000000001006')).uid))?.flow).toBe(
      'frictionless',
    );
    expect(await threeDSecureStep(g.h, '00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await threeDSecureStep(g.h, 'not-a-uid')).toBeUndefined();
  });

  it('completes once: a second completion is refused and changes nothing', async () => {
    const { g, uid } = await incomplete('4012000000001097');
    await completeThreeDSecure(g.h, uid, 'passed');
    const again = completeThreeDSecure(g.h, uid, 'failed');
    await expect(again).rejects.toBeInstanceOf(ApiError);
    await expect(again).rejects.toMatchObject({
      status: 409,
      message: 'Transaction is not waiting for 3-D Secure authentication: it is successful',
    });
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('successful');
  });

  it('answers not found for an unknown uid and for a transaction without a 3-D Secure step', async () => {
    const g = await gatewayShop();
    const plain = (await g.pay()).body.transaction.uid;
    for (const uid of ['00000000-0000-4000-8000-000000000000', plain, 'garbage']) {
      await expect(completeThreeDSecure(g.h, uid, 'passed')).rejects.toMatchObject({ status: 404 });
    }
  });

  it('an authorization passes 3-D Secure unpaid, and can then be captured', async () => {
    const { g, uid } = await incomplete('4012000000003010', 'authorization');
    const captureBefore = await g.send('/transactions/captures', { parent_uid: uid, amount: 1999 });
    expect(captureBefore.status).toBe(422);
    const { transaction } = await completeThreeDSecure(g.h, uid, 'passed');
    expect(transaction).toMatchObject({ type: 'authorization', status: 'successful', paid_at: null });
    const captured = await g.send('/transactions/captures', { parent_uid: uid, amount: 1999 });
    expect(captured.body.transaction).toMatchObject({ status: 'successful', parent_uid: uid });
  });
});
