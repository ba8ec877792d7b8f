import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../src/gateway/test-cards.js';
import { harness, TEST_PUBLIC_URL } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const platformCards = TEST_CARDS.filter((c) => c.source === 'platform');
const enrolled = platformCards.filter((c) => c.behaviour.kind === 'three_ds');
const notEnrolled = platformCards.filter((c) => c.behaviour.kind !== 'three_ds');
const payWith = (g: GatewayShop, number: string, extra: Record<string, unknown> = {}) =>
  g.pay({ credit_card: card(number, extra) });

describe('platform test cards, shop without 3-D Secure', () => {
  it('answers a successful payment in the platform shape', async () => {
    const g = await gatewayShop();
    const res = await g.pay({
      tracking_id: 'order-42',
      language: 'ru',
      customer: { ip: '127.0.0.1', email: 'john@example.com' },
      billing_address: {
        first_name: 'John',
        last_name: 'Doe',
        country: 'LV',
        city: 'Riga',
        zip: 'LV-1082',
        address: 'Demo str 12',
      },
      additional_data: { receipt_text: ['Thanks'] },
    });
    expect(res.status).toBe(200);
    const now = g.h.clock.now().toISOString();
    expect(res.body).toEqual({
      transaction: {
        uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'successful',
        message: 'Successfully processed',
        amount: 1999,
        currency: 'EUR',
        description: 'Test order',
        type: 'payment',
        payment_method_type: 'credit_card',
        tracking_id: 'order-42',
        test: true,
        language: 'ru',
        created_at: now,
        updated_at: now,
        paid_at: now,
        expired_at: null,
        closed_at: null,
        settled_at: null,
        credit_card: {
          holder: 'John Doe',
          stamp: expect.stringMatching(/^[0-9a-f]{64}$/),
          brand: 'visa',
          last_4: '0000',
          first_1: '4',
          bin: '420000',
          issuer_country: null,
          issuer_name: null,
          product: null,
          token: expect.any(String),
          token_provider: null,
          exp_month: 1,
          exp_year: 2030,
        },
        customer: { ip: '127.0.0.1', email: 'john@example.com', device_id: null, birth_date: null },
        billing_address: {
          first_name: 'John',
          last_name: 'Doe',
          address: 'Demo str 12',
          country: 'LV',
          city: 'Riga',
          zip: 'LV-1082',
          state: null,
          phone: null,
        },
        additional_data: { receipt_text: ['Thanks'] },
        avs_cvc_verification: {
          avs_verification: { result_code: 'M' },
          cvc_verification: { result_code: '1' },
        },
        payment: {
          status: 'successful',
          message: 'Payment was approved',
          ref_id: '777888',
          gateway_id: 1,
          rrn: '999',
          auth_code: '654321',
          bank_code: '00',
          billing_descriptor: 'KOPEK SANDBOX',
          amount: 1999,
          currency: 'EUR',
        },
      },
    });
  });

  it.each([
    ['payment', 'Payment was declined'],
    ['authorization', 'Authorization was declined'],
  ])('declines 4005550000000019: a %s "%s", as the platform says', async (type, message) => {
    const g = await gatewayShop();
    const send = type === 'payment' ? g.pay : g.authorize;
    const res = await send({ credit_card: card('4005550000000019') });
    expect(res.status).toBe(200);
    const t = res.body.transaction;
    expect(t).toMatchObject({ type, status: 'failed', message, paid_at: null });
    expect(t[type]).toMatchObject({ status: 'failed', message, auth_code: null });
  });

  it.each(enrolled.map((c) => c.number))('approves 3-D Secure card %s: 3-D Secure is off', async (number) => {
    const g = await gatewayShop();
    const t = (await payWith(g, number)).body.transaction;
    expect(t.status).toBe('successful');
    expect(t.three_d_secure_verification).toBeUndefined();
    expect(t.redirect_url).toBeUndefined();
  });

  it('approves any other valid card, of any brand', async () => {
    const g = await gatewayShop();
    for (const number of ['4111111111111111', '378282246310005', '9112300000000000', '2200000000000004']) {
      const t = (await payWith(g, number, { verification_value: '1234' })).body.transaction;
      expect(t.status, number).toBe('successful');
    }
  });

  it('authorizes without paying: no paid_at, an authorization section', async () => {
    const g = await gatewayShop();
    const t = (await g.authorize()).body.transaction;
    expect(t).toMatchObject({ type: 'authorization', status: 'successful', paid_at: null });
    expect(t.authorization).toMatchObject({ status: 'successful', message: 'Authorization was approved' });
    expect(t.payment).toBeUndefined();
  });
});

describe('platform test cards, shop with 3-D Secure', () => {
  it.each(enrolled.map((c) => c.number))(
    'answers enrolled card %s incomplete, with a /process/ redirect',
    async (number) => {
      const g = await gatewayShop({ threeDs: true });
      const res = await payWith(g, number, { holder: 'J' });
      expect(res.status).toBe(200);
      const t = res.body.transaction;
      expect(t).toMatchObject({ status: 'incomplete', message: null, paid_at: null });
      expect(t.redirect_url).toBe(`${TEST_PUBLIC_URL}/process/${t.uid}`);
      expect(t.three_d_secure_verification).toMatchObject({
        status: 'pending',
        ve_status: 'Y',
        pa_status: null,
      });
      expect(t.payment).toMatchObject({ status: 'incomplete', message: null });
    },
  );

  it.each(notEnrolled.map((c) => [c.number, c.behaviour.kind === 'declined' ? 'failed' : 'successful']))(
    'processes card %s without 3-D Secure: it is not enrolled (%s)',
    async (number, status) => {
      const g = await gatewayShop({ threeDs: true });
      const t = (await payWith(g, number)).body.transaction;
      expect(t.status).toBe(status);
      expect(t.three_d_secure_verification).toMatchObject({
        status: 'successful',
        ve_status: 'N',
        pa_status: null,
      });
    },
  );

  it('skips 3-D Secure when the request asks to', async () => {
    const g = await gatewayShop({ threeDs: true });
    const t = (await payWith(g, '4012000000001097', { skip_three_d_secure_verification: true })).body
      .transaction;
    expect(t.status).toBe('successful');
    expect(t.three_d_secure_verification).toBeUndefined();
  });

  it('keeps the return_url of the request for after the 3-D Secure step', async () => {
    const g = await gatewayShop({ threeDs: true });
    const t = (
      await g.authorize({ credit_card: card('4012000000003010'), return_url: 'https://shop.example/back' })
    ).body.transaction;
    expect(t.status).toBe('incomplete');
    const [row] = await g.h.db.query<{ return_url: string }>(
      'SELECT return_url FROM transactions WHERE uid = $1',
      [t.uid],
    );
    expect(row?.return_url).toBe('https://shop.example/back');
  });
});
