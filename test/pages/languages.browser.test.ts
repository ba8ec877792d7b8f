import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { card, charge } from '../gateway/helpers.js';
import { newShop, type TestShop } from '../harness.js';
import { CABINET_SHOP_TEXTS, cabinetCases, cabinetContext } from './cabinet-walk.js';
import { englishWords, rawKeys } from './words.js';

/**
 * Every page a buyer can meet, in real Chromium, in both languages (the buyer's switch, `?lang=`):
 * the product page, the subscription checkout, the checkout API's page, the 3-D Secure step, each
 * in every state (the form, its errors, paid, declined, waiting for the bank, expired, sold out) and
 * the problem pages. A page fails on a raw key or placeholder, on an English word on a Russian page
 * (or a Russian one on an English page), on a card brand not written as the brand writes it, and
 * without its switch to the same page in the other language.
 *
 * The states are made beforehand through the app (in process): the browser loads each page once,
 * with scripts off (nothing moves on before it is read; the pages work without them), one context
 * per language.
 *
 * The cabinet is walked too, every page of a shop that did a bit of everything (cabinet-walk.ts), in
 * both languages on a 390 px phone: each page fails on the same words as the hosted pages, and on a
 * page wider than the phone (a horizontal scroll).
 */

const CARDS = {
  approved: '4200000000000000',
  declined: '4005550000000019',
  challenge: '4012000000001097',
  frictionless: '4012000000001006',
};

/** What the shop wrote: its names stay as written on a page in any language. */
const SHOP_NAME = 'Lavka Tea';
const SHOP_TEXTS = [
  SHOP_NAME,
  'Green tea',
  'Loose leaf',
  'Gold',
  'Welcome to Gold',
  'Two tickets',
  'Tea set',
];

interface Case {
  name: string;
  /** The page's address (the switch's `lang` is added to it). */
  url: string;
  /** The English heading, so each case is sure to show the state it names. */
  title: string;
  status?: number;
  /** What the buyer does on the page before it is read (a form sent with mistakes). */
  act?: (page: Page, context: BrowserContext) => Promise<unknown>;
  /** The card shown, as every page writes it. */
  card?: string;
  /** The link back to the shop (the expired pages). */
  back?: string;
}

let kit: BrowserKit;
const cases: Case[] = [];
const contexts: Partial<Record<'en' | 'ru', { context: BrowserContext; page: Page }>> = {};

/** GET a page in process, then post its form with its hidden fields (CSRF token, order, token) and `fields`. */
async function submit(url: string, fields: Record<string, string>, action?: string) {
  const path = pathOf(url);
  const shown = await kit.h.app.inject({ method: 'GET', url: path });
  expect(shown.statusCode, `${url}: ${shown.body}`).toBe(200);
  const setCookie = shown.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [])
    .map((c) => c.split(';')[0])
    .join('; ');
  const hidden = Object.fromEntries(
    [...shown.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
  const posted = await kit.h.app.inject({
    method: 'POST',
    url: action ?? path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams({ ...hidden, ...fields }).toString(),
  });
  expect(posted.statusCode, `${url}: ${posted.body}`).toBeLessThan(400);
  return posted.headers.location as string | undefined;
}

const pathOf = (url: string) => {
  const u = new URL(url, kit.base);
  return `${u.pathname}${u.search}`;
};

const cardFields = (number: string) => ({
  card_number: number,
  card_holder: 'JANE DOE',
  card_exp_month: '12',
  card_exp_year: '2030',
  card_cvc: '123',
});

async function productCases(shop: TestShop) {
  const product = async (fields: Record<string, unknown> = {}) => {
    const res = await kit.api(shop, 'POST', '/products', {
      name: 'Green tea',
      description: 'Loose leaf',
      currency: 'EUR',
      amount: 1290,
      language: 'en',
      visible_fields: [],
      ...fields,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; pay_url: string };
  };
  const paid = async (number: string, fields: Record<string, unknown> = {}) => {
    const p = await product(fields);
    const location = await submit(p.pay_url, cardFields(number));
    expect(location, p.pay_url).toMatch(/\/result\?order=/);
    return `${kit.base}${location}`;
  };
  const form = await product({ visible_fields: ['email', 'country', 'phone'] });
  cases.push({ name: 'product form', url: form.pay_url, title: 'Green tea' });
  const mistakes = await product();
  cases.push({
    name: 'product form with mistakes',
    url: mistakes.pay_url,
    title: 'Green tea',
    status: 422,
    act: async (page) => {
      await page.fill('#f-card_number', '1234');
      await page.fill('#f-card_holder', 'J');
      await page.fill('#f-card_exp_month', '13');
      await page.fill('#f-card_exp_year', '2001');
      await page.fill('#f-card_cvc', '1');
      return Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    },
  });
  const soldOut = await product({ quantity: 0, return_url: `${kit.shopSite.url}/tea` });
  cases.push({ name: 'product sold out', url: soldOut.pay_url, title: 'Sold out', status: 410 });
  const expired = await product({
    expired_at: '2099-06-01T12:00:00Z',
    return_url: `${kit.shopSite.url}/tea`,
  });
  await kit.h.db.query('UPDATE products SET expired_at = $1, expires_at = $2 WHERE id = $3', [
    '2021-06-01T09:00:00Z',
    '2021-06-01T09:00:00Z',
    expired.id,
  ]);
  cases.push({
    name: 'product expired',
    url: expired.pay_url,
    title: 'This offer has expired',
    status: 410,
    back: `${kit.shopSite.url}/tea`,
  });
  cases.push({
    name: 'product paid',
    url: await paid(CARDS.approved),
    title: 'Payment successful',
    card: 'Visa •••• 0000',
  });
  cases.push({
    name: 'product authorized',
    url: await paid(CARDS.approved, { transaction_type: 'authorization' }),
    title: 'Payment authorized',
  });
  cases.push({ name: 'product declined', url: await paid(CARDS.declined), title: 'Payment declined' });
  cases.push({
    name: 'product unknown',
    url: `${kit.base}/products/prd_nope/pay`,
    title: 'Page not found',
    status: 404,
  });
}

async function subscriptionCases(shop: TestShop, threeDsShop: TestShop) {
  const subscription = async (as: TestShop, extra: Record<string, unknown> = {}) => {
    const res = await kit.api(as, 'POST', '/subscriptions', {
      plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      receipt_text: ['Welcome to Gold'],
      language: 'en',
      ...extra,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; redirect_url: string };
  };
  const paid = async (as: TestShop, number: string, extra: Record<string, unknown> = {}) => {
    const sub = await subscription(as, extra);
    await submit(sub.redirect_url, cardFields(number), '/v2/checkout');
    return sub.redirect_url;
  };
  const form = await subscription(shop);
  cases.push({ name: 'subscription form', url: form.redirect_url, title: 'Subscribe: Gold' });
  const mistakes = await subscription(shop);
  cases.push({
    name: 'subscription form with mistakes',
    url: mistakes.redirect_url,
    title: 'Subscribe: Gold',
    status: 422,
    act: (page) => Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]),
  });
  cases.push({
    name: 'subscription paid',
    url: await paid(shop, CARDS.approved),
    title: 'Thank you, your subscription is active',
    card: 'Visa •••• 0000',
  });
  cases.push({
    name: 'subscription trial',
    url: await paid(shop, CARDS.approved, {
      plan: {
        title: 'Gold',
        currency: 'EUR',
        plan: { amount: 1999, interval: 1, interval_unit: 'month' },
        trial: { amount: 0, interval: 7, interval_unit: 'day' },
      },
    }),
    title: 'Thank you, your trial has started',
  });
  cases.push({
    name: 'subscription declined',
    url: await paid(shop, CARDS.declined),
    title: 'Payment declined',
  });
  cases.push({
    name: 'subscription waiting for 3-D Secure',
    url: await paid(threeDsShop, CARDS.challenge),
    title: 'Confirm the payment with your bank',
  });
  const expired = await subscription(shop, { return_url: `${kit.shopSite.url}/plans` });
  await kit.h.db.query('UPDATE checkouts SET expires_at = $1 WHERE subscription_id = $2', [
    '2021-06-01T09:00:00Z',
    expired.id,
  ]);
  cases.push({
    name: 'subscription link expired',
    url: expired.redirect_url,
    title: 'This payment link has expired',
    status: 410,
    back: `${kit.shopSite.url}/plans`,
  });
}

async function ctpCases(shop: TestShop, threeDsShop: TestShop) {
  const checkout = async (as: TestShop, extra: Record<string, unknown> = {}, settings = {}) => {
    const res = await kit.api(as, 'POST', '/ctp/api/checkouts', {
      checkout: {
        transaction_type: 'payment',
        order: { amount: 4500, currency: 'EUR', description: 'Two tickets', tracking_id: 'order-42' },
        settings: { language: 'en', customer_fields: { visible: ['email', 'first_name'] }, ...settings },
        ...extra,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.checkout as { token: string; redirect_url: string };
  };
  const paid = async (as: TestShop, number: string, extra: Record<string, unknown> = {}) => {
    const c = await checkout(as, extra);
    await submit(
      c.redirect_url,
      { email: 'jane@example.com', first_name: 'Jane', ...cardFields(number) },
      '/v2/checkout',
    );
    return c.redirect_url;
  };
  cases.push({ name: 'checkout form', url: (await checkout(shop)).redirect_url, title: 'Payment' });
  cases.push({
    name: 'checkout form, saving a card',
    url: (await checkout(shop, { transaction_type: 'tokenization' })).redirect_url,
    title: 'Save card',
  });
  cases.push({
    name: 'checkout form with mistakes',
    url: (await checkout(shop)).redirect_url,
    title: 'Payment',
    status: 422,
    act: (page) => Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]),
  });
  cases.push({
    name: 'checkout declined, tries left',
    url: await paid(shop, CARDS.declined, { attempts: 3 }),
    title: 'Payment',
  });
  cases.push({
    name: 'checkout declined, no tries left',
    url: await paid(shop, CARDS.declined, { attempts: 1 }),
    title: 'Payment declined',
  });
  cases.push({ name: 'checkout paid', url: await paid(shop, CARDS.approved), title: 'Payment successful' });
  cases.push({
    name: 'checkout authorized',
    url: await paid(shop, CARDS.approved, { transaction_type: 'authorization' }),
    title: 'Payment authorized',
  });
  cases.push({
    name: 'checkout card saved',
    url: await paid(shop, CARDS.approved, { transaction_type: 'tokenization' }),
    title: 'Card saved',
  });
  cases.push({
    name: 'checkout waiting for 3-D Secure',
    url: await paid(threeDsShop, CARDS.challenge),
    title: 'Confirm the payment with your bank',
  });
  const expired = await checkout(shop, {}, { fail_url: `${kit.shopSite.url}/tickets` });
  await kit.h.db.query('UPDATE ctp_checkouts SET expires_at = $1 WHERE token = $2', [
    '2021-06-01T09:00:00Z',
    expired.token,
  ]);
  cases.push({
    name: 'checkout link expired',
    url: expired.redirect_url,
    title: 'This payment link has expired',
    status: 410,
    back: `${kit.shopSite.url}/tickets?token=${expired.token}&status=error`,
  });
  const site = await checkout(shop, {}, { success_url: `${kit.shopSite.url}/tickets/done` });
  await kit.h.db.query('UPDATE ctp_checkouts SET expires_at = $1 WHERE token = $2', [
    '2021-06-01T09:00:00Z',
    site.token,
  ]);
  cases.push({
    name: 'checkout link expired, the shop only known by its site',
    url: site.redirect_url,
    title: 'This payment link has expired',
    status: 410,
    back: `${kit.shopSite.url}/`,
  });
  const protectedForm = await checkout(shop);
  cases.push({
    name: 'checkout form sent without its token',
    url: protectedForm.redirect_url,
    title: 'This form has expired',
    status: 403,
    act: async (page) => {
      // The form's token is its only CSRF proof (no cookie: the page may be framed cross-site).
      await page.evaluate(() => {
        for (const input of document.querySelectorAll<HTMLInputElement>('input[name="_csrf"]'))
          input.value = '';
      });
      return Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    },
  });
  cases.push({
    name: 'checkout unknown',
    url: `${kit.base}/v2/checkout?token=${'x'.repeat(32)}`,
    title: 'Page not found',
    status: 404,
  });
}

async function threeDsCases(threeDsShop: TestShop) {
  const payment = async (number: string) => {
    const res = await kit.api(threeDsShop, 'POST', '/transactions/payments', {
      request: charge({ description: 'Tea set', language: 'en', credit_card: card(number) }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.transaction?.status, JSON.stringify(res.body)).toBe('incomplete');
    return res.body.transaction as { uid: string; redirect_url: string };
  };
  cases.push({
    name: '3-D Secure challenge',
    url: (await payment(CARDS.challenge)).redirect_url,
    title: '3-D Secure authentication',
    card: 'Visa •••• 1097',
  });
  cases.push({
    name: '3-D Secure frictionless',
    url: (await payment(CARDS.frictionless)).redirect_url,
    title: 'Checking your card',
  });
  const passed = await payment(CARDS.challenge);
  await submit(passed.redirect_url, { outcome: 'passed' });
  cases.push({ name: '3-D Secure passed', url: passed.redirect_url, title: 'Payment successful' });
  const failed = await payment(CARDS.challenge);
  await submit(failed.redirect_url, { outcome: 'failed' });
  cases.push({ name: '3-D Secure failed', url: failed.redirect_url, title: 'Payment failed' });
  cases.push({
    name: '3-D Secure unknown',
    url: `${kit.base}/process/00000000-0000-4000-8000-000000000000`,
    title: 'Payment not found',
    status: 404,
  });
}

// The states are made while the file is collected, so that each is a case of its own below.
kit = await startBrowserKit();
{
  const shop = await newShop(kit.h, { name: SHOP_NAME });
  const threeDsShop = await newShop(kit.h, { name: SHOP_NAME, threeDs: true });
  await productCases(shop);
  await subscriptionCases(shop, threeDsShop);
  await ctpCases(shop, threeDsShop);
  await threeDsCases(threeDsShop);
}
// The cabinet's pages, walked below on a phone in both languages.
const cabinet = await cabinetCases(kit);

beforeAll(async () => {
  for (const lang of ['en', 'ru'] as const) {
    const context = await kit.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    contexts[lang] = { context, page };
  }
});

afterAll(async () => {
  for (const c of Object.values(contexts)) await c?.context.close();
  await kit?.stop();
});

/** The page's own visible text and labels: what is marked as another language (the switch) is left out. */
function readPage(page: Page) {
  return page.evaluate(() => {
    const lang = document.documentElement.lang;
    const parts: string[] = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const owner = node.parentElement;
      if (!owner || owner.closest('script, style, template')) continue;
      if (owner.closest(`[lang]:not([lang="${lang}"])`)) continue;
      // Machine names kept as they are (event and header names, time zone ids, JSON): not words.
      if (owner.closest('[translate="no"]')) continue;
      parts.push(node.textContent ?? '');
    }
    for (const el of document.querySelectorAll('[aria-label], [placeholder], [title], img[alt]'))
      for (const name of ['aria-label', 'placeholder', 'title', 'alt'])
        if (el.hasAttribute(name)) parts.push(el.getAttribute(name) ?? '');
    const link = document.querySelector<HTMLAnchorElement>('.lang-switch a[hreflang]');
    return {
      lang,
      text: parts.join('\n'),
      title: document.querySelector('h1')?.textContent ?? '',
      switchTo: link ? { href: link.href, lang: link.getAttribute('hreflang') } : null,
      back: [...document.querySelectorAll<HTMLAnchorElement>('.actions a')].map((a) => a.href),
    };
  });
}

describe.each(['en', 'ru'] as const)('every page in %s', (lang) => {
  it.each(cases)('$name', async (c) => {
    const { page, context } = contexts[lang] ?? {};
    if (!page || !context) throw new Error('no browser context');
    const url = new URL(c.url);
    url.searchParams.set('lang', lang);
    const response = await page.goto(url.href);
    if (c.act) await c.act(page, context);
    const shown = await readPage(page);
    expect(response?.status() ?? 0).toBe(c.act ? 200 : (c.status ?? 200));
    expect(shown.lang).toBe(lang);
    if (lang === 'en') expect(shown.title.trim()).toBe(c.title);
    else if (!SHOP_TEXTS.includes(c.title)) expect(shown.title.trim()).not.toBe(c.title);
    expect(rawKeys(shown.text)).toEqual([]);
    if (lang === 'ru') expect(englishWords(shown.text, SHOP_TEXTS)).toEqual([]);
    else expect(shown.text).not.toMatch(/[А-Яа-яЁё]/);
    // Brands as the brands write them, never the API's `visa` or `master`.
    expect(shown.text).not.toMatch(/\b(visa|master|VISA|MASTERCARD|MasterCard)\b/);
    if (c.card) expect(shown.text).toContain(c.card);
    if (c.back) expect(shown.back.filter((href) => href.startsWith(c.back ?? '-'))).toHaveLength(1);
    // The switch: this page again, in the other language.
    const other = lang === 'en' ? 'ru' : 'en';
    expect(shown.switchTo?.lang).toBe(other);
    const to = new URL(shown.switchTo?.href ?? '');
    const here = new URL(page.url());
    expect(to.pathname).toBe(here.pathname);
    expect(to.searchParams.get('lang')).toBe(other);
    if (here.searchParams.has('token') || c.url.includes('token='))
      expect(to.searchParams.get('token')).toBe(new URL(c.url).searchParams.get('token'));
  });
});

describe('the language switch', () => {
  it('keeps the page and the choice for the pages that follow', async () => {
    const form = cases.find((c) => c.name === 'checkout form');
    const { page } = contexts.en ?? {};
    if (!form || !page) throw new Error('no checkout form');
    await page.goto(form.url);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await Promise.all([page.waitForNavigation(), page.click('.lang-switch a')]);
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    expect(new URL(page.url()).pathname).toBe(new URL(form.url).pathname);
    // Without `lang` in the address, the choice is remembered.
    await page.goto(form.url);
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    await Promise.all([page.waitForNavigation(), page.click('.lang-switch a')]);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
  });
});

describe.each(['en', 'ru'] as const)('every cabinet page at 390 px in %s', (lang) => {
  const pages: { signedIn?: Page; signedOut?: Page } = {};
  const opened: BrowserContext[] = [];
  beforeAll(async () => {
    for (const signedOut of [false, true]) {
      const context = await cabinetContext(kit, cabinet.shop, lang, { signedOut });
      opened.push(context);
      pages[signedOut ? 'signedOut' : 'signedIn'] = await context.newPage();
    }
  });
  afterAll(async () => {
    for (const context of opened) await context.close();
  });

  it.each(cabinet.cases)('$name', async (c) => {
    const page = c.signedOut ? pages.signedOut : pages.signedIn;
    if (!page) throw new Error('no browser context');
    const response =
      c.status === 401
        ? // A wrong key: the form again, with its error.
          await page.goto(`${kit.base}${c.path}`).then(async () => {
            await page.fill('#f-shop_id', String(cabinet.shop.shop.id));
            await page.fill('#f-secret_key', 'not-the-key');
            const [answer] = await Promise.all([
              page.waitForNavigation(),
              page.locator('form[action="/cabinet/sign-in"] button[type="submit"]').click(),
            ]);
            return answer;
          })
        : await page.goto(`${kit.base}${c.path}`);
    expect(response?.status() ?? 0).toBe(c.status ?? 200);
    const shown = await readPage(page);
    // Nothing wider than the phone: the page never scrolls sideways (a wide table scrolls in its own box).
    const width = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      phone: window.innerWidth,
      wide: [...document.querySelectorAll('body *')]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
        .filter((el) => !el.closest('.table-wrap'))
        .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
        .slice(0, 5),
    }));
    // Every problem of the page at once.
    const problems = {
      lang: shown.lang,
      rawKeys: rawKeys(shown.text),
      otherLanguage:
        lang === 'ru'
          ? englishWords(shown.text, CABINET_SHOP_TEXTS)
          : (shown.text.match(/[А-Яа-яЁё]+/g) ?? []),
      apiBrands: shown.text.match(/\b(visa|master|VISA|MASTERCARD|MasterCard)\b/g) ?? [],
      widerThanPhone: width.page > width.phone ? `${width.page} px: ${width.wide.join(', ')}` : false,
    };
    expect(problems).toEqual({ lang, rawKeys: [], otherLanguage: [], apiBrands: [], widerThanPhone: false });
    if (c.name === 'subscription, active') await kit.screenshot(page, `cabinet-subscription-390-${lang}`);
    // The switch (a signed-in page's): this page again, in the other language.
    if (c.status !== undefined || c.signedOut) return;
    const other = lang === 'en' ? 'ru' : 'en';
    const to = await page.locator('a.lang-switch').getAttribute('href');
    expect(to).toBe(`/cabinet/language?to=${other}&back=${encodeURIComponent(c.path)}`);
  });
});
