import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT_TTL_MS } from '../../../src/pages/checkout-url.js';
import { runScriptedContinue } from '../../browser/continue.js';
import { type BrowserKit, startBrowserKit } from '../../browser/kit.js';
import { newShop, type TestShop, withClock } from '../../harness.js';
import { monthly } from '../../subscriptions/helpers.js';

/**
 * The hosted checkout pages in real Chromium: subscriptions and the checkout API. A result page's
 * script continues to the shop after 3 s; those tests move the page's clock rather than wait.
 */

let kit: BrowserKit;
let shop: TestShop;
let threeDsShop: TestShop;

beforeAll(async () => {
  kit = await startBrowserKit();
  shop = await newShop(kit.h);
  threeDsShop = await newShop(kit.h, { threeDs: true });
});

afterAll(async () => {
  await kit?.stop();
});

async function subscription(as: TestShop, extra: Record<string, unknown> = {}, plan = monthly()) {
  const res = await kit.api(as, 'POST', '/subscriptions', {
    plan,
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    return_url: `${kit.shopSite.url}/thanks?order=7`,
    receipt_text: ['Welcome to Gold'],
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; redirect_url: string };
}

async function fillCard(page: Page, number: string) {
  await page.fill('#f-card_number', number);
  await page.fill('#f-card_holder', 'JANE DOE');
  await page.fill('#f-card_exp_month', '12');
  await page.fill('#f-card_exp_year', '2030');
  await page.fill('#f-card_cvc', '123');
}

const landedAt = (id: string) => kit.shopSite.hits.find((u) => u.searchParams.get('id') === id);

describe('subscription checkout in the browser', () => {
  it('pays without a trial and returns to return_url with id', async () => {
    const sub = await subscription(shop);
    await kit.withPage(
      async (page) => {
        await page.goto(sub.redirect_url);
        await fillCard(page, '4200 0000 0000 0000');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1.ok');
        expect(await page.textContent('.receipt')).toContain('Welcome to Gold');
        await kit.screenshot(page, 'subscription-checkout-paid');
        await runScriptedContinue(page);
        await page.waitForURL((u) => u.href.startsWith(kit.shopSite.url));
      },
      { clock: true },
    );
    const hit = landedAt(sub.id);
    expect(hit?.pathname).toBe('/thanks');
    expect(hit?.searchParams.get('order')).toBe('7');
  });

  it('starts a trial on a phone', async () => {
    const sub = await subscription(
      shop,
      {},
      monthly({ trial: { amount: 0, interval: 7, interval_unit: 'day' } }),
    );
    await kit.withPage(
      async (page) => {
        await page.goto(sub.redirect_url);
        expect(await page.textContent('main')).toContain('Free for 7 days');
        await fillCard(page, '4200000000000000');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1.ok');
        expect(await page.textContent('h1')).toContain('trial has started');
        await kit.screenshot(page, 'subscription-checkout-trial-mobile');
      },
      { mobile: true },
    );
  });

  it.each([
    ['passes', 'Pass authentication', 'h1.ok', 'passed', 'active'],
    ['fails', 'Fail authentication', 'h1.bad', 'failed', 'failed'],
  ])(
    '%s a 3-D Secure challenge and lands on its result page',
    async (_outcome, button, heading, shot, state) => {
      const sub = await subscription(threeDsShop);
      await kit.withPage(async (page) => {
        await page.goto(sub.redirect_url);
        await fillCard(page, '4012000000001097');
        await page.click('button[type=submit]');
        await page.waitForURL(/\/process\//);
        await page.click(`button:has-text("${button}")`);
        await page.waitForSelector(heading);
        await kit.screenshot(page, `subscription-checkout-3ds-${shot}`);
      });
      expect((await kit.api(threeDsShop, 'GET', `/subscriptions/${sub.id}`)).body.state).toBe(state);
    },
  );

  it('works with scripts off, in Russian', async () => {
    const sub = await subscription(shop, { language: 'ru' });
    await kit.withPage(
      async (page) => {
        await page.goto(sub.redirect_url);
        expect(await page.getAttribute('html', 'lang')).toBe('ru');
        await fillCard(page, '4200000000000000');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1.ok');
        expect(await page.textContent('h1')).toContain('Спасибо');
        await kit.screenshot(page, 'subscription-checkout-ru-no-js');
        await page.click('a.button.primary');
        await page.waitForURL((u) => u.href.startsWith(kit.shopSite.url));
      },
      { javaScriptEnabled: false },
    );
    expect(landedAt(sub.id)).toBeDefined();
  });

  it('used, expired and unknown tokens show clear pages', async () => {
    const used = await subscription(shop);
    const expired = await subscription(shop);
    await kit.withPage(
      async (page) => {
        // The paid page and the used one would continue to the shop after 3 s: the page's clock
        // stands still (clock: true), so each address typed here is the one that opens.
        await page.goto(used.redirect_url);
        await fillCard(page, '4200000000000000');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1.ok');
        await page.goto(used.redirect_url);
        expect(await page.locator('form').count()).toBe(0);
        await kit.screenshot(page, 'subscription-checkout-used');
        await page.goto(`${kit.base}/v2/checkout?token=${'x'.repeat(40)}`);
        expect(await page.textContent('h1')).toContain('Page not found');
        await kit.screenshot(page, 'subscription-checkout-unknown');
        await withClock(kit.h, CHECKOUT_TTL_MS + 1000, async () => {
          const res = await page.goto(expired.redirect_url);
          expect(res?.status()).toBe(410);
          expect(await page.textContent('h1')).toContain('expired');
          await kit.screenshot(page, 'subscription-checkout-expired');
        });
      },
      { clock: true },
    );
  });

  it('pays a checkout of the checkout API and ends at success_url', async () => {
    const created = await kit.api(shop, 'POST', '/ctp/api/checkouts', {
      checkout: {
        transaction_type: 'payment',
        order: { amount: 4500, currency: 'EUR', description: 'Two tickets' },
        settings: {
          success_url: `${kit.shopSite.url}/paid`,
          cancel_url: `${kit.shopSite.url}/cancel`,
          customer_fields: { visible: ['email'] },
        },
      },
    });
    expect(created.status).toBe(201);
    const { token, redirect_url } = created.body.checkout;
    await kit.withPage(
      async (page) => {
        await page.goto(redirect_url);
        await page.fill('#f-email', 'buyer@example.com');
        await fillCard(page, '4200000000000000');
        await page.click('button[type=submit]');
        await page.waitForSelector('h1.ok');
        await kit.screenshot(page, 'ctp-checkout-paid');
        await runScriptedContinue(page);
        await page.waitForURL((u) => u.href.startsWith(kit.shopSite.url));
      },
      { clock: true },
    );
    const hit = kit.shopSite.hits.find((u) => u.searchParams.get('token') === token);
    expect(hit?.pathname).toBe('/paid');
    expect(hit?.searchParams.get('status')).toBe('successful');
    expect(hit?.searchParams.get('uid')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never logs a card number', () => {
    const all = kit.logs.join('\n');
    for (const number of ['4200000000000000', '4012000000001097', '4200 0000 0000 0000']) {
      expect(all).not.toContain(number);
    }
  });
});
