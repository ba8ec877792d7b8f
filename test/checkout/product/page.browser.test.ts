import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followRefresh, holdArrival, keepServedPages, refreshTarget } from '../../browser/continue.js';
import { type BrowserKit, startBrowserKit } from '../../browser/kit.js';
import { newShop, type TestShop } from '../../harness.js';
import { arrivedAtShop, fillCard, product, stopAndCheck, watchPolicy } from './browser.js';
import { CARDS } from './helpers.js';

/**
 * The product payment page itself in real Chromium: in Russian, with scripts off, with markup in its
 * description, on a phone. Paying and 3-D Secure are in pay.browser.test.ts. Pages are saved under
 * test-artifacts/screenshots/.
 *
 * A result page continues to the shop after 3 s by its `<meta http-equiv="refresh">`: the Russian
 * test checks that tag and follows it at once (followRefresh); the one with scripts off waits for it.
 */

let kit: BrowserKit;
let shop: TestShop;
const violations: string[] = [];

beforeAll(async () => {
  kit = await startBrowserKit();
  shop = await newShop(kit.h, { name: 'Tea & Co' });
});

afterAll(async () => {
  await stopAndCheck(kit, violations);
});

describe('the page itself', () => {
  it('speaks Russian for a Russian product', async () => {
    const p = await product(kit, shop, {
      language: 'ru',
      name: 'Зелёный чай',
      visible_fields: ['email'],
      test: true,
    });
    await kit.withPage(
      async (page) => {
        watchPolicy(page, violations);
        const served = keepServedPages(page);
        const release = await holdArrival(page, kit.shopSite.url);
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
        const refresh = await refreshTarget(served, kit.base);
        expect(await page.locator('h1').textContent()).toBe('Оплата прошла успешно');
        await kit.screenshot(page, 'product-ru-success');
        release();
        await followRefresh(page, refresh);
        await arrivedAtShop(kit, page);
      },
      { locale: 'ru-RU' },
    );
  });

  it('works with scripts off, and the result still continues to the shop', async () => {
    const p = await product(kit, shop);
    await kit.withPage(
      async (page) => {
        const served = keepServedPages(page);
        // The browser leaves for the shop by itself after 3 s; it arrives once the page is checked.
        const release = await holdArrival(page, kit.shopSite.url);
        await page.goto(p.pay_url);
        await fillCard(page);
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForSelector('h1[data-result="success"]');
        // The suite's one real wait for a refresh: without scripts the browser goes on by itself.
        const target = await refreshTarget(served, kit.base);
        await kit.screenshot(page, 'product-no-js-success');
        release();
        const query = await arrivedAtShop(kit, page);
        expect(page.url()).toBe(target);
        expect(query.get('status')).toBe('successful');
      },
      { javaScriptEnabled: false },
    );
  });

  it('shows a description holding markup as text', async () => {
    const p = await product(kit, shop, { description: '<script>window.hacked = 1</script><b>bold</b>' });
    await kit.withPage(async (page) => {
      watchPolicy(page, violations);
      await page.goto(p.pay_url);
      expect(await page.locator('.product-description').textContent()).toBe(
        '<script>window.hacked = 1</script><b>bold</b>',
      );
      expect(await page.evaluate(() => (window as unknown as { hacked?: number }).hacked)).toBeUndefined();
      expect(await page.locator('.product-description b').count()).toBe(0);
    });
  });

  it('fits a phone screen and is reachable by keyboard', async () => {
    const p = await product(kit, shop, {
      visible_fields: ['first_name', 'last_name', 'email', 'zip'],
      test: true,
    });
    await kit.withPage(
      async (page) => {
        watchPolicy(page, violations);
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
