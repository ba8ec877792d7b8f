import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../../browser/kit.js';
import { newShop, type TestShop } from '../../harness.js';
import { CARDS } from './helpers.js';

/**
 * The product payment page in real Chromium against a listening Kopek: the buyer types, pays, goes
 * through 3-D Secure and lands back at the shop's site (kit.shopSite) with uid and status. Each final
 * page is saved under test-artifacts/screenshots/.
 */

let kit: BrowserKit;
let shop: TestShop;
let threeDsShop: TestShop;
const violations: string[] = [];

beforeAll(async () => {
  kit = await startBrowserKit();
  shop = await newShop(kit.h, { name: 'Tea & Co' });
  threeDsShop = await newShop(kit.h, { name: 'Secure Tea', threeDs: true });
});

afterAll(async () => {
  await kit?.stop();
  const all = kit?.logs.join('') ?? '';
  for (const number of Object.values(CARDS)) expect(all).not.toContain(number);
  expect(violations).toEqual([]);
});

function watchPolicy(page: Page): void {
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
}

async function product(owner: TestShop, fields: Record<string, unknown> = {}) {
  const res = await kit.api(owner, 'POST', '/products', {
    name: 'Green tea',
    description: 'Loose leaf, 100 g.\nShipped in a tin.',
    currency: 'EUR',
    amount: 1290,
    language: 'en',
    return_url: `${kit.shopSite.url}/thanks?ref=7`,
    ...fields,
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; pay_url: string; confirm_url: string };
}

async function fillCard(page: Page, number: string = CARDS.approved) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Name on card').fill('ANNA BUYER');
  await page.getByLabel('Expiry month (MM)').fill('12');
  await page.getByLabel('Expiry year (YYYY)').fill('2040');
  await page.getByLabel('Security code (CVC)').fill('123');
}

/** Waits until the browser reaches the shop's site, and answers the query it arrived with. */
async function arrivedAtShop(page: Page): Promise<URLSearchParams> {
  await page.waitForURL((url) => url.href.startsWith(kit.shopSite.url), { timeout: 20_000 });
  const landed = new URL(page.url());
  // The shop's server got the buyer with that query (its later hits may be the browser's favicon).
  const hit = kit.shopSite.hits.find((h) => h.pathname === landed.pathname && h.search === landed.search);
  expect(hit).toBeDefined();
  return landed.searchParams;
}

describe('paying a product', () => {
  it('pays with the buyer fields filled and continues to the shop by itself', async () => {
    const p = await product(shop, { visible_fields: ['email', 'phone', 'country'], quantity: 5 });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(p.pay_url);
      expect(await page.locator('h1').textContent()).toBe('Green tea');
      expect(await page.locator('.money').first().textContent()).toBe('12.90 EUR');
      await page.getByLabel('E-mail').fill('anna@example.com');
      await page.getByLabel('Phone').fill('+49 30 1234567');
      await page.getByLabel('Country').selectOption('DE');
      await fillCard(page);
      // The card script groups the number as it is typed.
      expect(await page.getByLabel('Card number').inputValue()).toBe('4200 0000 0000 0000');
      await kit.screenshot(page, 'product-pay-form');
      await page.getByRole('button', { name: 'Pay 12.90 EUR' }).click();
      await page.waitForSelector('h1[data-result="success"]');
      expect(await page.locator('h1').textContent()).toBe('Payment successful');
      await kit.screenshot(page, 'product-pay-success');
      const query = await arrivedAtShop(page);
      expect(query.get('ref')).toBe('7');
      expect(query.get('status')).toBe('successful');
      expect(query.get('uid')).toMatch(/^[0-9a-f-]{36}$/);
    });
    const read = await kit.api(shop, 'GET', `/products/${p.id}`);
    expect(read.body.quantity).toBe(4);
  });

  it('authorizes an authorization product, and the button returns to the shop at once', async () => {
    const p = await product(shop, { transaction_type: 'authorization' });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(p.confirm_url);
      await fillCard(page);
      await page.getByRole('button', { name: /Pay/ }).click();
      await page.waitForSelector('h1[data-result="authorized"]');
      await kit.screenshot(page, 'product-authorized');
      await page.getByRole('link', { name: 'Return to the shop' }).click();
      const query = await arrivedAtShop(page);
      expect(query.get('status')).toBe('successful');
      const tx = await kit.api(shop, 'GET', `/transactions/${query.get('uid')}`);
      expect(tx.body.transaction.type).toBe('authorization');
      expect(tx.body.transaction.additional_data.product_id).toBe(p.id);
    });
  });

  it('shows a declined card and returns to the shop with the failed status', async () => {
    const p = await product(shop, { quantity: 1 });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(p.pay_url);
      await fillCard(page, CARDS.declined);
      await page.getByRole('button', { name: /Pay/ }).click();
      await page.waitForSelector('h1[data-result="declined"]');
      await kit.screenshot(page, 'product-declined');
      const query = await arrivedAtShop(page);
      expect(query.get('status')).toBe('failed');
    });
    expect((await kit.api(shop, 'GET', `/products/${p.id}`)).body.quantity).toBe(1);
  });

  it('requires the visible fields: the browser asks first, the server shows each problem', async () => {
    const p = await product(shop, { visible_fields: ['first_name', 'email', 'birth_date'] });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(p.pay_url);
      await fillCard(page);
      await page.getByRole('button', { name: /Pay/ }).click();
      // The browser's own check keeps the form here.
      expect(
        await page.getByLabel('First name').evaluate((el: HTMLInputElement) => el.validity.valueMissing),
      ).toBe(true);
      // Past the browser's check (an old browser, a tampered form): the server answers the same.
      await page.locator('form').evaluate((form: HTMLFormElement) => {
        form.noValidate = true;
      });
      await page.getByLabel('E-mail').fill('not-an-email');
      await page.getByRole('button', { name: /Pay/ }).click();
      await page.waitForSelector('.error-summary');
      expect(await page.locator('#f-first_name-error').textContent()).toBe('Fill in this field');
      expect(await page.locator('#f-email-error').textContent()).toContain('e-mail address');
      expect(await page.getByLabel('E-mail').inputValue()).toBe('not-an-email');
      expect(await page.getByLabel('Card number').inputValue()).toBe('');
      await kit.screenshot(page, 'product-required-fields');
    });
  });

  it('shows sold out and expired products clearly', async () => {
    const soldOut = await product(shop, { quantity: 0 });
    const expired = await product(shop, { expired_at: '2021-06-01T12:00:00+03:00' });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(soldOut.pay_url);
      expect(await page.locator('h1').textContent()).toBe('Sold out');
      await kit.screenshot(page, 'product-sold-out');
      await page.goto(expired.pay_url);
      expect(await page.locator('h1').textContent()).toBe('This offer has expired');
      await kit.screenshot(page, 'product-expired');
    });
  });
});

describe('3-D Secure through a product payment', () => {
  for (const outcome of ['passed', 'failed'] as const) {
    it(`returns to the shop after a ${outcome} challenge`, async () => {
      const p = await product(threeDsShop, { quantity: 1 });
      await kit.withPage(async (page) => {
        watchPolicy(page);
        await page.goto(p.pay_url);
        await fillCard(page, CARDS.challenge);
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(/\/process\//);
        await page
          .getByRole('button', { name: outcome === 'passed' ? 'Pass authentication' : 'Fail authentication' })
          .click();
        const kind = outcome === 'passed' ? 'success' : 'declined';
        await page.waitForSelector(`h1[data-result="${kind}"]`);
        await kit.screenshot(page, `product-3ds-${outcome}`);
        const query = await arrivedAtShop(page);
        expect(query.get('status')).toBe(outcome === 'passed' ? 'successful' : 'failed');
      });
      const quantity = (await kit.api(threeDsShop, 'GET', `/products/${p.id}`)).body.quantity;
      expect(quantity).toBe(outcome === 'passed' ? 0 : 1);
    });
  }
});

describe('the page itself', () => {
  it('speaks Russian for a Russian product', async () => {
    const p = await product(shop, {
      language: 'ru',
      name: 'Зелёный чай',
      visible_fields: ['email'],
      test: true,
    });
    await kit.withPage(
      async (page) => {
        watchPolicy(page);
        await page.goto(p.pay_url);
        expect(await page.getAttribute('html', 'lang')).toBe('ru');
        expect(await page.locator('.test-banner').textContent()).toContain('Тестовый режим');
        await page.getByLabel('Электронная почта').fill('anna@example.com');
        await page.getByLabel('Номер карты').fill(CARDS.approved);
        await page.getByLabel('Имя на карте').fill('ANNA BUYER');
        await page.getByLabel('Месяц окончания (ММ)').fill('12');
        await page.getByLabel('Год окончания (ГГГГ)').fill('2040');
        await page.getByLabel('Код безопасности (CVC)').fill('123');
        await kit.screenshot(page, 'product-ru-form');
        await page.getByRole('button', { name: /Оплатить/ }).click();
        await page.waitForSelector('h1[data-result="success"]');
        expect(await page.locator('h1').textContent()).toBe('Оплата прошла успешно');
        await kit.screenshot(page, 'product-ru-success');
        await arrivedAtShop(page);
      },
      { locale: 'ru-RU' },
    );
  });

  it('works with scripts off, and the result still continues to the shop', async () => {
    const p = await product(shop);
    await kit.withPage(
      async (page) => {
        await page.goto(p.pay_url);
        await fillCard(page);
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForSelector('h1[data-result="success"]');
        await kit.screenshot(page, 'product-no-js-success');
        const query = await arrivedAtShop(page);
        expect(query.get('status')).toBe('successful');
      },
      { javaScriptEnabled: false },
    );
  });

  it('shows a description holding markup as text', async () => {
    const p = await product(shop, { description: '<script>window.hacked = 1</script><b>bold</b>' });
    await kit.withPage(async (page) => {
      watchPolicy(page);
      await page.goto(p.pay_url);
      expect(await page.locator('.product-description').textContent()).toBe(
        '<script>window.hacked = 1</script><b>bold</b>',
      );
      expect(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked)).toBeUndefined();
      expect(await page.locator('.product-description b').count()).toBe(0);
    });
  });

  it('fits a phone screen and is reachable by keyboard', async () => {
    const p = await product(shop, {
      visible_fields: ['first_name', 'last_name', 'email', 'zip'],
      test: true,
    });
    await kit.withPage(
      async (page) => {
        watchPolicy(page);
        await page.goto(p.pay_url);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await page.keyboard.press('Tab');
        expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-first_name');
        await kit.screenshot(page, 'product-phone');
      },
      { mobile: true },
    );
  });
});
