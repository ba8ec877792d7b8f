import { describe, expect, it } from 'vitest';
import { sweepExpiredCheckouts } from '../../../src/checkout/expiry.js';
import { CHECKOUT_TTL_MS } from '../../../src/pages/checkout-url.js';
import { client, harness, newShop, withClock } from '../../harness.js';
import { goodCard, openPage, postForm } from '../forms.js';

/** The platform's checkout API, in process: create, read, pay on the page, expire. */

const body = (extra: Record<string, unknown> = {}, order: Record<string, unknown> = {}) => ({
  checkout: {
    transaction_type: 'payment',
    attempts: 2,
    order: { amount: 1250, currency: 'USD', description: 'Order #42', tracking_id: 'order-42', ...order },
    settings: {
      success_url: 'https://shop.example/ok?x=1',
      decline_url: 'https://shop.example/declined',
      fail_url: 'https://shop.example/fail',
      cancel_url: 'https://shop.example/cancel',
      notification_url: 'https://shop.example/hook',
      language: 'en',
      customer_fields: { visible: ['email', 'first_name'], read_only: ['email'] },
    },
    customer: { email: 'jane@example.com', first_name: 'Jane' },
    ...extra,
  },
});

async function setup() {
  const h = await harness();
  const shop = await newShop(h);
  return { h, shop, api: client(h, shop) };
}

const paymentsOf = (h: Awaited<ReturnType<typeof harness>>, shopId: number) =>
  h.db.query<{ status: string; notification_url: string | null }>(
    "SELECT status, notification_url FROM transactions WHERE shop_id = $1 AND type IN ('payment', 'authorization')",
    [shopId],
  );

describe('checkout API', () => {
  it('creates a checkout and reads it back', async () => {
    const { api } = await setup();
    const created = await api.post('/ctp/api/checkouts', body(), { 'x-api-version': '2' });
    expect(created.status).toBe(201);
    const { token, redirect_url } = created.body.checkout;
    expect(redirect_url).toBe(`http://checkout.kopek.test/widget/hpp.html?token=${token}`);
    const got = await api.get(`/ctp/api/checkouts/${token}`);
    expect(got.status).toBe(200);
    expect(got.body.checkout).toMatchObject({
      token,
      finished: false,
      expired: false,
      status: null,
      version: '2',
      order: { amount: 1250, currency: 'USD', description: 'Order #42' },
      gateway_response: null,
    });
  });

  it("answers the platform's redirect_url, as its PHP client's testRedirectUrl asserts, and both addresses show the page", async () => {
    const { h, api } = await setup();
    const created = await api.post('/ctp/api/checkouts', body());
    const { token, redirect_url } = created.body.checkout;
    // begateway-api-php, tests/BeGateway/GetPaymentTokenTest.php, testRedirectUrl: the address, and
    // its script name as ResponseCheckout::getRedirectUrlScriptName cuts it.
    const checkoutBase = 'http://checkout.kopek.test';
    expect(redirect_url).toBe(`${checkoutBase}/widget/hpp.html?token=${token}`);
    expect(redirect_url.replace(/(.+)\?token=(.+)/, '$1')).toBe(`${checkoutBase}/widget/hpp.html`);
    const got = await api.get(`/ctp/api/checkouts/${token}`);
    expect(got.body.checkout.redirect_url).toBe(redirect_url);
    // The platform's address and the one handed out before both show the form.
    for (const path of [`/widget/hpp.html?token=${token}`, `/v2/checkout?token=${token}`]) {
      const page = await h.app.inject({ method: 'GET', url: path });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`name="token" value="${token}"`);
    }
  });

  it('accepts the version as a body field', async () => {
    const { api } = await setup();
    const created = await api.post('/ctp/api/checkouts', { ...body(), version: 2.1 });
    expect(created.status).toBe(201);
    const got = await api.get(`/ctp/api/checkouts/${created.body.checkout.token}`);
    expect(got.body.checkout.version).toBe('2.1');
  });

  it('refuses a bad body with a 422 in the gateway shape', async () => {
    const { api } = await setup();
    const bad = await api.post('/ctp/api/checkouts', {
      checkout: {
        transaction_type: 'refund',
        order: { amount: -1, currency: 'XXX' },
        settings: { success_url: 'ftp://x' },
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.response.errors.checkout).toMatchObject({
      transaction_type: expect.any(Array),
      order: { amount: expect.any(Array), currency: expect.any(Array), description: expect.any(Array) },
      settings: { success_url: expect.any(Array) },
    });
    expect(typeof bad.body.response.message).toBe('string');
    expect((await api.post('/ctp/api/checkouts', {})).status).toBe(422);
    expect((await api.post('/ctp/api/checkouts', { checkout: [] })).status).toBe(422);
  });

  it('unknown tokens, other shops and missing credentials', async () => {
    const a = await setup();
    const other = client(a.h, await newShop(a.h));
    const token = (await a.api.post('/ctp/api/checkouts', body())).body.checkout.token;
    const unknown = await a.api.get('/ctp/api/checkouts/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Record not found' });
    const foreign = await other.get(`/ctp/api/checkouts/${token}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ message: 'Record not found' });
    expect((await client(a.h, undefined).get(`/ctp/api/checkouts/${token}`)).status).toBe(401);
  });

  it('is paid on the page: one payment with the notification_url, then the success URL', async () => {
    const { h, shop, api } = await setup();
    const token = (await api.post('/ctp/api/checkouts', body())).body.checkout.token;
    const page = await openPage(h, token);
    expect(page.status).toBe(200);
    expect(page.html).toContain('$12.50');
    expect(page.html).toMatch(/name="email"[^>]*readonly/);
    const posted = await postForm(h, page, token, {
      ...goodCard(),
      first_name: 'Janet',
      email: 'evil@example.com',
    });
    expect(posted.status).toBe(303);
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got).toMatchObject({ finished: true, status: 'successful' });
    const uid = got.gateway_response.transaction.uid;
    expect(got.gateway_response.transaction.customer.email).toBe('jane@example.com');
    expect(await paymentsOf(h, shop.shop.id)).toEqual([
      { status: 'successful', notification_url: 'https://shop.example/hook' },
    ]);
    const result = await openPage(h, token);
    expect(result.html).toContain(
      `https://shop.example/ok?x=1&amp;token=${token}&amp;status=successful&amp;uid=${uid}`,
    );
    // Twice on one token: nothing more is charged.
    await postForm(h, page, token, goodCard());
    expect(await paymentsOf(h, shop.shop.id)).toHaveLength(1);
  });

  it('two posts at once pay once', async () => {
    const { h, shop, api } = await setup();
    const token = (await api.post('/ctp/api/checkouts', body())).body.checkout.token;
    const page = await openPage(h, token);
    const fields = { ...goodCard(), first_name: 'Jane' };
    await Promise.all([postForm(h, page, token, fields), postForm(h, page, token, fields)]);
    expect(await paymentsOf(h, shop.shop.id)).toHaveLength(1);
  });

  it('a declined card may be tried again until attempts are used, then goes to decline_url', async () => {
    const { h, api } = await setup();
    const token = (await api.post('/ctp/api/checkouts', body())).body.checkout.token;
    const page = await openPage(h, token);
    const declined = { ...goodCard('4005550000000019'), first_name: 'Jane' };
    await postForm(h, page, token, declined);
    const once = await openPage(h, token);
    expect(once.status).toBe(200);
    expect(once.html).toContain('Tries left: 1');
    await postForm(h, once, token, declined);
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got).toMatchObject({ finished: true, status: 'failed' });
    expect((await openPage(h, token)).html).toContain('https://shop.example/declined?token=');
  });

  it('tokenization stores the card and answers its token', async () => {
    const { h, api } = await setup();
    const token = (
      await api.post('/ctp/api/checkouts', body({ transaction_type: 'tokenization' }, { amount: 0 }))
    ).body.checkout.token;
    const page = await openPage(h, token);
    await postForm(h, page, token, { ...goodCard(), first_name: 'Jane' });
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got.status).toBe('successful');
    expect(got.gateway_response.transaction.credit_card.token).toMatch(/^[0-9A-Za-z]{64}$/);
  });

  it('an expired checkout says so, and its expiry is announced once, in the platform shape', async () => {
    const { h, shop, api } = await setup();
    const token = (await api.post('/ctp/api/checkouts', body())).body.checkout.token;
    await withClock(h, CHECKOUT_TTL_MS + 1000, async () => {
      const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
      expect(got).toMatchObject({
        expired: true,
        finished: false,
        status: 'error',
        message: 'Token is expired.',
      });
      expect((await openPage(h, token)).status).toBe(410);
      const deps = { db: h.db, clock: h.clock, config: h.config };
      // This shop's only: the store is shared with the other worker, whose clock is its own.
      await Promise.all([
        sweepExpiredCheckouts(deps, shop.shop.id),
        sweepExpiredCheckouts(deps, shop.shop.id),
      ]);
    });
    const events = await h.db.query<{ event: string; url: string; payload: any }>(
      'SELECT event, url, payload FROM events WHERE shop_id = $1 AND resource_id = $2',
      [shop.shop.id, token],
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event: 'expired.checkout',
      url: 'https://shop.example/hook',
      payload: { checkout: { token, status: 'error', message: 'Token is expired.' } },
    });
  });
});
