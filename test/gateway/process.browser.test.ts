import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { newShop, type TestShop } from '../harness.js';
import { cardBody, card as subscriptionCard } from '../subscriptions/helpers.js';
import { card, charge } from './helpers.js';

/**
 * The cardholder's side of 3-D Secure in real Chromium (test/browser/kit.ts): the app listens on a
 * loopback port, the shop's return_url is a small HTTP server that records where the browser landed.
 * Each final page is saved under test-artifacts/screenshots/.
 */

const CHALLENGE = '4012000000001097';
const FRICTIONLESS = '4012000000001006';
const FRICTIONLESS_FAILING = '4012000000001022';

let kit: BrowserKit;
const violations: string[] = [];

beforeAll(async () => {
  kit = await startBrowserKit();
});

afterAll(async () => {
  await kit?.stop();
  // Card numbers never reach a log line, not even through the page's requests.
  const all = kit?.logs.join('') ?? '';
  for (const number of [CHALLENGE, FRICTIONLESS, FRICTIONLESS_FAILING]) expect(all).not.toContain(number);
  // Nothing on these pages breaks the Content-Security-Policy (no inline script or style, no form target).
  expect(violations).toEqual([]);
});

/** Records what the page's policy blocked, reported by Chromium on the console. */
function watchPolicy(page: Page): void {
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
}

async function threeDsShop(test = true): Promise<TestShop> {
  return newShop(kit.h, { threeDs: true, test, name: 'Corner <Shop>' });
}

/** A payment waiting for 3-D Secure, returning to the shop's site with a query of its own. */
async function incompletePayment(shop: TestShop, number: string, extra: Record<string, unknown> = {}) {
  const res = await kit.api(shop, 'POST', '/transactions/payments', {
    request: charge({
      credit_card: card(number),
      return_url: `${kit.shopSite.url}/return?order=42`,
      ...extra,
    }),
  });
  expect(res.status).toBe(200);
  const { transaction } = res.body;
  expect(transaction.status).toBe('incomplete');
  expect(transaction.redirect_url).toBe(`${kit.base}/process/${transaction.uid}`);
  return transaction as { uid: string; redirect_url: string };
}

const atShop = (url: URL) => url.origin === kit.shopSite.url;

/** Opens the redirect_url, clicks `button` and waits for the browser to land at the shop. */
async function choose(redirectUrl: string, button: string, screenshot?: string): Promise<URL> {
  return kit.withPage(async (page) => {
    watchPolicy(page);
    await page.goto(redirectUrl);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      '3-D Secure authentication',
    );
    if (screenshot) await kit.screenshot(page, screenshot);
    await Promise.all([
      page.waitForURL(atShop),
      page.getByRole('button', { name: button, exact: true }).click(),
    ]);
    return new URL(page.url());
  });
}

const status = async (shop: TestShop, uid: string) =>
  (await kit.api(shop, 'GET', `/transactions/${uid}`)).body.transaction.status;

describe('the 3-D Secure page in Chromium', () => {
  it('shows the challenge; "Pass authentication" returns to the shop with status successful', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE, { description: '<script>alert(1)</script>' });
    const page = await kit.withPage(async (p) => {
      watchPolicy(p);
      let dialogs = 0;
      p.on('dialog', (d) => {
        dialogs += 1;
        void d.dismiss();
      });
      await p.goto(t.redirect_url);
      return {
        lang: await p.locator('html').getAttribute('lang'),
        text: await p.locator('main').textContent(),
        banner: await p.getByRole('note').first().textContent(),
        buttons: await p.getByRole('button').allInnerTexts(),
        stylesheet: await p.evaluate(() => getComputedStyle(document.body).display),
        dialogs,
      };
    });
    expect(page.lang).toBe('en');
    expect(page.text).toContain('€19.99');
    expect(page.text).toContain('Visa •••• 1097');
    expect(page.text).toContain('Corner <Shop>');
    // What the shop or buyer wrote is text on the page, never markup that runs.
    expect(page.text).toContain('<script>alert(1)</script>');
    expect(page.dialogs).toBe(0);
    expect(page.banner).toBe('Test mode: no real money is charged');
    expect(page.buttons).toEqual(['Pass authentication', 'Fail authentication']);
    // The stylesheet from /assets applies (the hosted layout is a flex column).
    expect(page.stylesheet).toBe('flex');

    const landed = await choose(t.redirect_url, 'Pass authentication', '3ds-challenge');
    expect(landed.pathname).toBe('/return');
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      order: '42',
      uid: t.uid,
      status: 'successful',
    });
    expect(kit.shopSite.hits.some((hit) => hit.searchParams.get('uid') === t.uid)).toBe(true);
    const after = await kit.api(shop, 'GET', `/transactions/${t.uid}`);
    expect(after.body.transaction).toMatchObject({ uid: t.uid, status: 'successful' });
    expect(after.body.transaction.redirect_url).toBeUndefined();
  });

  it('"Fail authentication" returns to the shop with status failed', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE);
    const landed = await choose(t.redirect_url, 'Fail authentication');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ order: '42', uid: t.uid, status: 'failed' });
    const after = await kit.api(shop, 'GET', `/transactions/${t.uid}`);
    expect(after.body.transaction).toMatchObject({
      status: 'failed',
      message: '3-D Secure authentication failed',
    });
  });

  it.each([
    [FRICTIONLESS, 'successful'],
    [FRICTIONLESS_FAILING, 'failed'],
  ])('completes frictionless card %s without a click: %s', async (number, expected) => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, number);
    const landed = await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(t.redirect_url);
      await page.waitForURL(atShop);
      return new URL(page.url());
    });
    expect(Object.fromEntries(landed.searchParams)).toEqual({ order: '42', uid: t.uid, status: expected });
    expect(await status(shop, t.uid)).toBe(expected);
  });

  it('with scripts off, a frictionless step waits for its Continue button, then completes', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, FRICTIONLESS, { return_url: undefined, language: 'ru' });
    const result = await kit.withPage(
      async (page) => {
        watchPolicy(page);
        await page.goto(t.redirect_url);
        await page.getByRole('heading', { name: 'Проверяем карту' }).waitFor();
        const waiting = await status(shop, t.uid);
        await page.getByRole('button', { name: 'Продолжить', exact: true }).click();
        await page.getByRole('heading', { name: 'Платёж прошёл успешно' }).waitFor();
        await kit.screenshot(page, '3ds-frictionless-no-js-result');
        return { waiting, text: await page.locator('main').textContent() };
      },
      { javaScriptEnabled: false },
    );
    expect(result.waiting).toBe('incomplete');
    expect(result.text).toContain('19,99\u00a0€');
    expect(await status(shop, t.uid)).toBe('successful');
  });

  it('without a return_url shows the result, in the language of the payment, and keeps it on reload', async () => {
    const shop = await threeDsShop(false);
    const t = await incompletePayment(shop, CHALLENGE, { return_url: undefined, language: 'ru' });
    const result = await kit.withPage(
      async (page) => {
        watchPolicy(page);
        await page.goto(t.redirect_url);
        await page.getByRole('button', { name: 'Пройти проверку', exact: true }).click();
        await page.getByRole('heading', { name: 'Платёж прошёл успешно' }).waitFor();
        const first = await page.locator('main').textContent();
        await kit.screenshot(page, '3ds-result-ru-mobile');
        await page.goto(t.redirect_url);
        return {
          first,
          again: await page.locator('main').textContent(),
          lang: await page.locator('html').getAttribute('lang'),
          banners: await page.locator('.test-banner').count(),
        };
      },
      { mobile: true },
    );
    expect(result.lang).toBe('ru');
    expect(result.first).toContain('19,99\u00a0€');
    expect(result.again).toContain('Платёж прошёл успешно');
    expect(result.banners).toBe(0);
    expect(await status(shop, t.uid)).toBe('successful');
  });

  it("a form whose token is not the page's is refused with a page, and changes nothing", async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE);
    const heading = await kit.withPage(async (page) => {
      await page.goto(t.redirect_url);
      // The step's form needs no cookie (it may run in a cross-site frame), only its own token.
      await page.evaluate(() => {
        for (const input of document.querySelectorAll<HTMLInputElement>('input[name="_csrf"]'))
          input.value = `${input.value.slice(0, -4)}AAAA`;
      });
      await page.getByRole('button', { name: 'Pass authentication', exact: true }).click();
      await page.getByRole('heading', { name: 'This form has expired' }).waitFor();
      await kit.screenshot(page, '3ds-expired-form');
      return page.getByRole('heading', { level: 1 }).textContent();
    });
    expect(heading).toBe('This form has expired');
    expect(await status(shop, t.uid)).toBe('incomplete');
  });
});

describe('a subscription whose first charge needs 3-D Secure, in Chromium', () => {
  async function redirecting(shop: TestShop) {
    const res = await kit.api(
      shop,
      'POST',
      '/subscriptions',
      cardBody({ card: subscriptionCard(CHALLENGE), return_url: `${kit.shopSite.url}/subscribed` }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      state: 'redirecting',
      paid_billing_cycles: 0,
      last_transaction: { status: 'incomplete', redirect_url: expect.stringMatching(/\/process\//) },
    });
    return res.body as { id: string; last_transaction: { uid: string; redirect_url: string } };
  }

  it('becomes active once the cardholder passes', async () => {
    const shop = await threeDsShop();
    const sub = await redirecting(shop);
    const landed = await choose(sub.last_transaction.redirect_url, 'Pass authentication');
    expect(landed.pathname).toBe('/subscribed');
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      id: sub.id,
      uid: sub.last_transaction.uid,
      status: 'successful',
    });
    const after = await kit.api(shop, 'GET', `/subscriptions/${sub.id}`);
    expect(after.body).toMatchObject({
      state: 'active',
      paid_billing_cycles: 1,
      last_transaction: { uid: sub.last_transaction.uid, status: 'successful' },
    });
  });

  it('fails once the cardholder fails', async () => {
    const shop = await threeDsShop();
    const sub = await redirecting(shop);
    const landed = await choose(sub.last_transaction.redirect_url, 'Fail authentication');
    expect(landed.searchParams.get('status')).toBe('failed');
    const after = await kit.api(shop, 'GET', `/subscriptions/${sub.id}`);
    expect(after.body).toMatchObject({
      state: 'failed',
      paid_billing_cycles: 0,
      last_transaction: { uid: sub.last_transaction.uid, status: 'failed' },
    });
  });
});
