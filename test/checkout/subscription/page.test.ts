import { describe, expect, it } from 'vitest';
import { sweepExpiredCheckouts } from '../../../src/checkout/expiry.js';
import { CHECKOUT_TTL_MS } from '../../../src/pages/checkout-url.js';
import { withClock } from '../../harness.js';
import { monthly, paymentsOf, subShop } from '../../subscriptions/helpers.js';
import { goodCard, openPage, postForm } from '../forms.js';

/** The hosted page of a redirect subscription, in process: every state a token can be in. */

async function redirectSub(extra: Record<string, unknown> = {}, plan = monthly()) {
  const s = await subShop();
  const res = await s.api.post('/subscriptions', {
    plan,
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    return_url: 'https://shop.example/back?from=kopek',
    receipt_text: ['Thank you for subscribing', 'Gold <b>plan</b>'],
    ...extra,
  });
  expect(res.status).toBe(201);
  return { ...s, sub: res.body, token: res.body.token as string };
}

const eventsOf = (s: { h: { db: any }; shop: { shop: { id: number } } }, id: string) =>
  s.h.db.query('SELECT event, url FROM events WHERE shop_id = $1 AND resource_id = $2 ORDER BY id', [
    s.shop.shop.id,
    id,
  ]) as Promise<Array<{ event: string; url: string | null }>>;

describe('subscription checkout page', () => {
  it('shows the plan, the amount due and the card form, with shop text escaped', async () => {
    const s = await redirectSub({}, monthly({ title: 'Gold <script>alert(1)</script>' }));
    expect(s.sub.redirect_url).toBe(`http://checkout.kopek.test/v2/checkout?token=${s.token}`);
    const page = await openPage(s.h, s.token);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Gold &lt;script>');
    expect(page.html).not.toContain('<script>alert');
    expect(page.html).toContain('€19.99');
    expect(page.html).toContain('autocomplete="cc-number"');
    expect(page.csrf).not.toBe('');
  });

  it('pays: the subscription becomes active with its card, the events of the card variant, once', async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token);
    const posted = await postForm(s.h, page, s.token, goodCard());
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`http://checkout.kopek.test/v2/checkout?token=${s.token}`);
    const got = await s.api.get(`/subscriptions/${s.sub.id}`);
    expect(got.body.state).toBe('active');
    expect(got.body.card.last_4).toBe('0000');
    expect(got.body.paid_billing_cycles).toBe(1);
    const events = (await eventsOf(s, s.sub.id)).map((e) => e.event);
    expect(events).toEqual(['created.subscription', 'activated.subscription']);
    const result = await openPage(s.h, s.token);
    expect(result.html).toContain('your subscription is active');
    expect(result.html).toContain('Gold &lt;b>plan&lt;/b>');
    expect(result.html).toContain(`https://shop.example/back?from=kopek&amp;id=${s.sub.id}`);
    // Used: posting again changes nothing and charges nothing.
    const again = await postForm(s.h, page, s.token, goodCard());
    expect(again.status).toBe(303);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
  });

  it('a free trial starts the trial without a charge, with the next charge date shown', async () => {
    const plan = monthly({ trial: { amount: 0, interval: 14, interval_unit: 'day' } });
    const s = await redirectSub({}, plan);
    const page = await openPage(s.h, s.token);
    expect(page.html).toContain('Free for 14 days');
    const posted = await postForm(s.h, page, s.token, goodCard());
    expect(posted.status).toBe(303);
    const got = await s.api.get(`/subscriptions/${s.sub.id}`);
    expect(got.body.state).toBe('trial');
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(0);
    const events = (await eventsOf(s, s.sub.id)).map((e) => e.event);
    expect(events).toEqual(['created.subscription', 'trial_started.subscription']);
  });

  it('asks for the customer when the subscription has none and links the new customer', async () => {
    const s = await subShop();
    const res = await s.api.post('/subscriptions', { plan: monthly() });
    const token = res.body.token as string;
    const page = await openPage(s.h, token);
    expect(page.html).toContain('autocomplete="email"');
    const missing = await postForm(s.h, page, token, goodCard());
    expect(missing.status).toBe(422);
    expect(missing.html).toContain('role="alert"');
    // The card number is not echoed back, whole or in part; 4200 inside a token or an asset's hash
    // is chance, not the number.
    expect(missing.html).not.toMatch(/(?<![0-9A-Za-z_-])4200/);
    const posted = await postForm(s.h, page, token, { ...goodCard(), email: 'buyer@example.com' });
    expect(posted.status).toBe(303);
    const got = await s.api.get(`/subscriptions/${res.body.id}`);
    expect(got.body.state).toBe('active');
    expect(got.body.customer.email).toBe('buyer@example.com');
  });

  it('a mistyped card shows the form again and charges nothing; the token stays usable', async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token);
    const bad = await postForm(s.h, page, s.token, { ...goodCard('4200000000000001'), card_cvc: '1' });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain('aria-invalid="true"');
    expect((await s.api.get(`/subscriptions/${s.sub.id}`)).body.state).toBe('redirecting');
    const ok = await postForm(s.h, page, s.token, goodCard());
    expect(ok.status).toBe(303);
    expect((await s.api.get(`/subscriptions/${s.sub.id}`)).body.state).toBe('active');
  });

  it('a mistyped number says a digit is wrong, beside the expired date, in both languages', async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token);
    const mistyped = { ...goodCard('4200000000000001'), card_exp_month: '01', card_exp_year: '2020' };
    const bad = await postForm(s.h, page, s.token, mistyped);
    expect(bad.status).toBe(422);
    expect(bad.html).toContain(
      'id="f-card_number-error">not valid (a digit is wrong): check it against the card<',
    );
    expect(bad.html).toContain('Card number: not valid (a digit is wrong)');
    expect(bad.html).toContain('card has expired (valid through 01/2020)');
    const ru = await s.h.app.inject({
      method: 'POST',
      url: '/v2/checkout?lang=ru',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
      payload: new URLSearchParams({ _csrf: page.csrf, token: s.token, ...mistyped }).toString(),
    });
    expect(ru.statusCode).toBe(422);
    expect(ru.body).toContain('неверна одна из цифр');
    expect((await s.api.get(`/subscriptions/${s.sub.id}`)).body.state).toBe('redirecting');
  });

  it('a declined card fails the subscription, as the contract says of a first charge', async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token);
    await postForm(s.h, page, s.token, goodCard('4005550000000019'));
    expect((await s.api.get(`/subscriptions/${s.sub.id}`)).body.state).toBe('failed');
    const result = await openPage(s.h, s.token);
    expect(result.html).toContain('Payment declined');
  });

  it('two posts of one form at once charge once, and both see the same subscription', async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token);
    const [a, b] = await Promise.all([
      postForm(s.h, page, s.token, goodCard()),
      postForm(s.h, page, s.token, goodCard()),
    ]);
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
    expect((await s.api.get(`/subscriptions/${s.sub.id}`)).body.state).toBe('active');
  });

  it('unknown and malformed tokens are a 404 page; a form without its CSRF token is a 403 page', async () => {
    const s = await redirectSub();
    for (const url of ['/v2/checkout?token=nope', `/v2/checkout?token=${'A'.repeat(40)}`, '/v2/checkout']) {
      const res = await s.h.app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toContain('text/html');
    }
    const forged = await s.h.app.inject({
      method: 'POST',
      url: '/v2/checkout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: s.token, ...goodCard() }).toString(),
    });
    expect(forged.statusCode).toBe(403);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(0);
  });

  it('the Russian page, and other languages fall back to English', async () => {
    const ru = await redirectSub({ language: 'ru' });
    const page = await openPage(ru.h, ru.token);
    expect(page.html).toContain('<html lang="ru"');
    expect(page.html).toContain('Оформить подписку');
    const de = await redirectSub({ language: 'de' });
    expect((await openPage(de.h, de.token)).html).toContain('<html lang="en"');
  });

  it('an expired token shows a clear page, cannot be paid, and its expiry is announced once', async () => {
    const s = await redirectSub({ notification_url: 'https://shop.example/hook' });
    const page = await openPage(s.h, s.token);
    await withClock(s.h, CHECKOUT_TTL_MS + 1000, async () => {
      const expired = await openPage(s.h, s.token);
      expect(expired.status).toBe(410);
      expect(expired.html).toContain('expired');
      const posted = await postForm(s.h, page, s.token, goodCard());
      expect(posted.status).toBe(303);
      expect(await paymentsOf(s.h, s.shop)).toHaveLength(0);
      const deps = { db: s.h.db, clock: s.h.clock, config: s.h.config };
      // This shop's only: the store is shared with the other worker, whose clock is its own.
      const shopId = s.shop.shop.id;
      await Promise.all([sweepExpiredCheckouts(deps, shopId), sweepExpiredCheckouts(deps, shopId)]);
      await sweepExpiredCheckouts(deps, shopId);
    });
    const events = await eventsOf(s, s.sub.id);
    expect(events.filter((e) => e.event === 'checkout_expired.subscription')).toEqual([
      { event: 'checkout_expired.subscription', url: 'https://shop.example/hook' },
    ]);
  });

  it("in a frame on the shop's page: framable, laid out for it, paid without a cookie, the end told to the shop window", async () => {
    const s = await redirectSub();
    const page = await openPage(s.h, s.token, '&iframe=inline');
    expect(page.status).toBe(200);
    expect(page.cookie).toBe('');
    expect(page.html).toContain('class="hosted framed"');
    expect(page.html).toContain('name="iframe" value="inline"');
    const paid = await postForm(s.h, page, s.token, { ...goodCard(), iframe: 'inline' });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`http://checkout.kopek.test/v2/checkout?token=${s.token}&iframe=inline`);
    const result = await s.h.app.inject({
      method: 'GET',
      url: `/v2/checkout?token=${s.token}&iframe=inline`,
    });
    expect(result.headers['x-frame-options']).toBeUndefined();
    expect(result.body).toContain('data-frame-status="successful"');
    expect(result.body).toContain(`data-frame-url="https://shop.example/back?from=kopek&amp;id=${s.sub.id}"`);
  });
});
