import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../../browser/kit.js';
import { newShop, type TestShop } from '../../harness.js';
import { CARDS } from './helpers.js';

/**
 * The last unit of a product in real Chromium: 20 buyers, each in a browser of their own, have the
 * form filled and press Pay at the same moment. Exactly one is charged and sees the payment
 * succeed; the other 19 see "Sold out" and nothing is charged. Screenshots of the winner's page
 * and of one sold-out page are saved under test-artifacts/screenshots/.
 */

const BUYERS = 20;
/**
 * Buyers whose pages open and fill at once, before all twenty press Pay together. One by one, most of
 * the time goes on round trips between this process, the browser and its pages; a few side by side
 * overlap those without crowding a loaded machine.
 */
const OPENING_AT_ONCE = 4;

let kit: BrowserKit;
let shop: TestShop;

beforeAll(async () => {
  kit = await startBrowserKit();
  // A shop of its own, so every transaction it has is one of this test's.
  shop = await newShop(kit.h, { name: 'Last Unit Teas' });
}, 120_000);

afterAll(async () => {
  await kit?.stop();
});

async function fillCard(page: Page): Promise<void> {
  await page.getByLabel('Card number').fill(CARDS.approved);
  await page.getByLabel('Name on card').fill('ANNA BUYER');
  await page.getByLabel('Expiry month (MM)').fill('12');
  await page.getByLabel('Expiry year (YYYY)').fill('2040');
  await page.getByLabel('Security code (CVC)').fill('123');
}

describe('the last unit in 20 browsers at once', () => {
  it('goes to exactly one buyer; the other 19 see sold out and are not charged', async () => {
    // No return address: the winner's result page stays put instead of moving on to the shop.
    const created = await kit.api(shop, 'POST', '/products', {
      name: 'Last tin of Da Hong Pao',
      description: 'The only one left.',
      currency: 'EUR',
      amount: 4900,
      language: 'en',
      quantity: 1,
    });
    expect(created.status).toBe(201);
    const product = created.body as { id: string; pay_url: string };

    const contexts: BrowserContext[] = [];
    try {
      // Twenty buyers, each in a browser context of their own.
      const pages: Page[] = [];
      for (let first = 0; first < BUYERS; first += OPENING_AT_ONCE) {
        const group = Array.from({ length: Math.min(OPENING_AT_ONCE, BUYERS - first) }, async () => {
          const context = await kit.browser.newContext();
          contexts.push(context);
          const page = await context.newPage();
          page.setDefaultTimeout(90_000);
          // Every buyer opens the page while the unit is still there, and fills the form.
          const opened = await page.goto(product.pay_url);
          expect(opened?.status()).toBe(200);
          expect(await page.locator('h1').textContent()).toBe('Last tin of Da Hong Pao');
          await fillCard(page);
          expect(await page.getByLabel('Card number').inputValue()).toBe('4200 0000 0000 0000');
          return page;
        });
        pages.push(...(await Promise.all(group)));
      }

      // The status the app answered each buyer's POST with (303 to the result, or 410 sold out).
      const answers = pages.map((page) =>
        page.waitForResponse(
          (r) =>
            r.request().method() === 'POST' && new URL(r.url()).pathname === `/products/${product.id}/pay`,
          { timeout: 120_000 },
        ),
      );
      // All 20 press Pay at the same time.
      await Promise.all(pages.map((page) => page.getByRole('button', { name: 'Pay €49.00' }).click()));
      const statuses = (await Promise.all(answers)).map((r) => r.status());

      const outcomes = await Promise.all(
        pages.map(async (page) => {
          const done = page.locator('h1[data-result]').or(page.locator('h1', { hasText: /^Sold out$/ }));
          await done.waitFor({ timeout: 120_000 });
          return {
            page,
            result: await page.locator('h1').getAttribute('data-result'),
            title: await page.locator('h1').textContent(),
            text: await page.locator('main p').first().textContent(),
          };
        }),
      );

      const winners = outcomes.filter((o) => o.result === 'success');
      const soldOut = outcomes.filter((o) => o.title === 'Sold out');
      expect(winners).toHaveLength(1);
      expect(soldOut).toHaveLength(BUYERS - 1);
      expect(statuses.filter((s) => s === 303)).toHaveLength(1);
      expect(statuses.filter((s) => s === 410)).toHaveLength(BUYERS - 1);
      for (const o of soldOut) {
        expect(o.result).toBeNull();
        expect(o.text).toBe('“Last tin of Da Hong Pao” is sold out. Nothing was charged.');
      }

      const winner = winners[0]?.page as Page;
      expect(await winner.locator('h1').textContent()).toBe('Payment successful');
      // The result page names the transaction.
      const uid = (await winner.locator('dl code').textContent()) ?? '';
      expect(uid).toMatch(/^[0-9a-f-]{36}$/);
      await kit.screenshot(winner, 'product-last-unit-winner');
      await kit.screenshot(soldOut[0]?.page as Page, 'product-last-unit-sold-out');

      // The API agrees: one successful charge, of this product, and no unit left.
      const tx = await kit.api(shop, 'GET', `/transactions/${uid}`);
      expect(tx.status).toBe(200);
      expect(tx.body.transaction).toMatchObject({ type: 'payment', status: 'successful', amount: 4900 });
      expect(tx.body.transaction.additional_data.product_id).toBe(product.id);
      const charges = await kit.h.db.query<{ uid: string; status: string }>(
        'SELECT uid, status FROM transactions WHERE shop_id = $1',
        [shop.shop.id],
      );
      expect(charges).toEqual([{ uid, status: 'successful' }]);
      const after = await kit.api(shop, 'GET', `/products/${product.id}`);
      expect(after.status).toBe(200);
      expect(after.body.quantity).toBe(0);

      // A buyer arriving now finds it sold out too.
      const late = await pages[0]?.goto(product.pay_url);
      expect(late?.status()).toBe(410);
    } finally {
      await Promise.all(contexts.map((context) => context.close()));
    }

    // No card number reached the logs, in any form the browser or the app might write it.
    const logs = kit.logs.join('');
    expect(logs).not.toContain(CARDS.approved);
    expect(logs).not.toContain('4200 0000 0000 0000');
  }, 600_000);
});
