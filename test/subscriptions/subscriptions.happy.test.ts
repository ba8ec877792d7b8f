import { beforeAll, describe, expect, it } from 'vitest';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import {
  addMonthsIso,
  card,
  cardBody,
  cardRecord,
  customer,
  customerView,
  monthly,
  noExtras,
  paymentsOf,
  planView,
  type SubShop,
  subShop,
} from './helpers.js';

let s: SubShop;

beforeAll(async () => {
  s = await subShop();
});

describe('subscriptions: redirect variant (plan, no card)', () => {
  it('answers 201 redirecting with a checkout redirect_url and token, and opens a checkout', async () => {
    const now = s.h.clock.now().toISOString();
    const res = await s.api.post('/subscriptions', { plan: monthly() });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^sbs_[0-9A-Za-z]{24}$/),
      state: 'redirecting',
      created_at: now,
      updated_at: now,
      renew_at: null,
      active_to: null,
      card: {},
      customer: {},
      paid_billing_cycles: 0,
      number_failed_payment_attempts: 0,
      plan: planView(s.shop.shop.id),
      last_transaction: null,
      ...noExtras,
      redirect_url: `http://checkout.kopek.test/v2/checkout?token=${res.body.token}`,
      token: expect.stringMatching(/^[0-9A-Za-z]{40}$/),
    });
    const rows = await s.h.db.query<{ shop_id: number; subscription_id: string; completed_at: Date | null }>(
      'SELECT shop_id, subscription_id, completed_at FROM checkouts WHERE token = $1',
      [res.body.token],
    );
    expect(rows).toEqual([{ shop_id: s.shop.shop.id, subscription_id: res.body.id, completed_at: null }]);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(0);
  });

  it('creates the customer given as data, and uses one given by id', async () => {
    const created = await s.api.post('/subscriptions', {
      plan: monthly(),
      customer: customer({ first_name: 'Jane' }),
    });
    expect(created.status).toBe(201);
    expect(created.body.customer).toEqual(customerView({ first_name: 'Jane' }));
    expect((await s.api.get(`/customers/${created.body.customer.id}`)).body).toEqual(created.body.customer);

    const byId = await s.api.post('/subscriptions', {
      plan: monthly(),
      customer: { id: created.body.customer.id },
    });
    expect(byId.status).toBe(201);
    expect(byId.body.customer).toEqual(created.body.customer);
  });

  it('uses an existing plan given by id', async () => {
    const plan = await s.api.post('/plans', monthly({ title: 'Silver' }));
    const res = await s.api.post('/subscriptions', { plan: { id: plan.body.id } });
    expect(res.status).toBe(201);
    expect(res.body.plan).toEqual(plan.body);
  });
});

describe('subscriptions: card variant', () => {
  it('tokenizes the card, takes the first payment and answers the whole subscription', async () => {
    const own = await subShop();
    const now = own.h.clock.now().toISOString();
    const res = await own.api.post('/subscriptions', cardBody());
    expect(res.status).toBe(201);
    const payments = await paymentsOf(own.h, own.shop);
    expect(payments).toEqual([
      {
        uid: expect.any(String),
        amount: 1999,
        currency: 'EUR',
        status: 'successful',
        tracking_id: `${res.body.id}-1`,
      },
    ]);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^sbs_/),
      state: 'active',
      created_at: now,
      updated_at: now,
      renew_at: addMonthsIso(now, 1),
      active_to: addMonthsIso(now, 1),
      card: cardRecord('4200000000000000'),
      customer: customerView(),
      paid_billing_cycles: 1,
      number_failed_payment_attempts: 0,
      plan: planView(own.shop.shop.id),
      last_transaction: {
        uid: payments[0]?.uid,
        status: 'successful',
        message: 'Successfully processed',
        created_at: now,
      },
      ...noExtras,
    });
    expect((await own.api.get(`/subscriptions/${res.body.id}`)).body).toEqual(res.body);
  });

  it('subscribes from existing records: card token (with and without CVC), customer id, plan id', async () => {
    const first = await s.api.post('/subscriptions', cardBody());
    const plan = await s.api.post(
      '/plans',
      monthly({ title: 'Reuse', plan: { amount: 500, interval: 7, interval_unit: 'day' } }),
    );
    for (const cardRef of [
      { token: first.body.card.token },
      { token: first.body.card.token, verification_value: '1234' },
    ]) {
      const res = await s.api.post('/subscriptions', {
        plan: { id: plan.body.id },
        customer: { id: first.body.customer.id },
        card: cardRef,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        state: 'active',
        card: first.body.card,
        customer: first.body.customer,
        plan: plan.body,
        paid_billing_cycles: 1,
        renew_at: new Date(s.h.clock.now().getTime() + 7 * 86_400_000).toISOString(),
      });
    }
  });

  it('accepts spaces in the number and integer exp_month/exp_year, and answers integers', async () => {
    const res = await s.api.post(
      '/subscriptions',
      cardBody({ card: card('4200 0000 0000 0000', { exp_month: 3, exp_year: 2031 }) }),
    );
    expect(res.status).toBe(201);
    expect(res.body.card).toEqual(cardRecord('4200000000000000', 'visa', { exp_month: 3, exp_year: 2031 }));
  });

  it('recognises a Mastercard', async () => {
    const res = await s.api.post('/subscriptions', cardBody({ card: card('5555555555554444') }));
    expect(res.body.card).toEqual(cardRecord('5555555555554444', 'master'));
  });

  it('stores every request field and returns it, on create and on read', async () => {
    const extras = {
      tracking_id: 'order-42',
      device_id: 'device-7',
      return_url: 'https://shop.example/back?x=1',
      notification_url: 'https://shop.example/hook',
      additional_data: { contract: ['recurring'], meta: { a: 1 } },
      receipt_text: ['Thank you', 'See you next month'],
      avs_cvc_verification: { cvc_verification: { skip_verification: true } },
      settings: { language: 'de', auto_return: 5 },
      language: 'ru',
      dynamic_billing_descriptor: 'GOLD*MONTHLY',
    };
    for (const body of [cardBody(extras), { plan: monthly(), ...extras }]) {
      const res = await s.api.post('/subscriptions', body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject(extras);
      expect((await s.api.get(`/subscriptions/${res.body.id}`)).body).toMatchObject(extras);
    }
  });

  it('takes the widget language from settings when language is absent', async () => {
    const res = await s.api.post('/subscriptions', { plan: monthly(), settings: { language: 'fr' } });
    expect(res.body).toMatchObject({ language: 'fr', settings: { language: 'fr' } });
  });

  it('accepts a tracking_id of exactly 255 characters', async () => {
    const res = await s.api.post('/subscriptions', { plan: monthly(), tracking_id: 't'.repeat(255) });
    expect(res.status).toBe(201);
    expect(res.body.tracking_id).toHaveLength(255);
  });

  it('charges a plan with a long title (the payment description is shortened, not refused)', async () => {
    const res = await s.api.post('/subscriptions', cardBody({ plan: monthly({ title: 'T'.repeat(255) }) }));
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('active');
    const [payment] = await s.h.db.query<{ description: string }>(
      'SELECT description FROM transactions WHERE uid = $1',
      [res.body.last_transaction.uid],
    );
    expect(payment?.description.length).toBeLessThanOrEqual(255);
    expect(payment?.description).toContain(res.body.id);
  });

  it('ends billing after billing_cycles when the plan is not infinite', async () => {
    const res = await s.api.post(
      '/subscriptions',
      cardBody({ plan: monthly({ infinite: false, billing_cycles: 1 }) }),
    );
    expect(res.body).toMatchObject({ state: 'active', paid_billing_cycles: 1, renew_at: null });
    expect(res.body.active_to).toBe(addMonthsIso(s.h.clock.now().toISOString(), 1));
  });
});

describe('subscriptions: a first payment that does not succeed', () => {
  it.each([
    ['declined', '4005550000000019', 'failed', 'Payment was declined'],
    [
      'error',
      KOPEK_CARDS.error,
      'error',
      'Provider system error. Contact the payment service provider for details.',
    ],
  ])('%s card: failed and cancelled', async (_name, number, status, message) => {
    const own = await subShop();
    const res = await own.api.post('/subscriptions', cardBody({ card: card(number) }));
    expect(res.status).toBe(201);
    const now = own.h.clock.now().toISOString();
    const last = { uid: expect.any(String), status, message, created_at: now };
    expect(res.body).toMatchObject({
      state: 'failed',
      renew_at: null,
      active_to: null,
      paid_billing_cycles: 0,
      number_failed_payment_attempts: 1,
      last_transaction: last,
      cancel_reason: `First payment ${status}: ${message}`,
      cancelled_at: now,
      transaction: last,
    });
    expect(await paymentsOf(own.h, own.shop)).toMatchObject([{ status }]);
  });
});

describe('subscriptions: cancel', () => {
  it('cancels an active subscription with a reason', async () => {
    const created = await s.api.post('/subscriptions', cardBody());
    const res = await s.api.post(`/subscriptions/${created.body.id}/cancel`, {
      cancel_reason: 'Customer asked',
    });
    expect(res.status).toBe(200);
    const now = s.h.clock.now().toISOString();
    expect(res.body).toEqual({
      ...created.body,
      state: 'canceled',
      renew_at: null,
      updated_at: now,
      cancel_reason: 'Customer asked',
      cancelled_at: now,
      transaction: created.body.last_transaction,
    });
    expect((await s.api.get(`/subscriptions/${created.body.id}`)).body).toEqual(res.body);
  });

  it('cancels a redirecting subscription and closes its hosted page', async () => {
    const created = await s.api.post('/subscriptions', { plan: monthly() });
    const res = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'Abandoned' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      state: 'canceled',
      cancel_reason: 'Abandoned',
      transaction: null,
      card: {},
    });
    expect(res.body.redirect_url).toBeUndefined();
    expect(res.body.token).toBeUndefined();
    const [checkout] = await s.h.db.query<{ expires_at: Date }>(
      'SELECT expires_at FROM checkouts WHERE token = $1',
      [created.body.token],
    );
    expect(checkout?.expires_at.getTime()).toBeLessThanOrEqual(s.h.clock.now().getTime());
  });
});
