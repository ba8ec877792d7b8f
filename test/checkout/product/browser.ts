import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { BrowserKit } from '../../browser/kit.js';
import type { TestShop } from '../../harness.js';
import { CARDS } from './helpers.js';

/**
 * What the product payment page's browser tests share (pay.browser and page.browser): a product
 * returning to the kit's shop site, the card typed in, the arrival at the shop, and the checks made
 * once a file is done.
 */

/** Records what the page's Content-Security-Policy refused, reported by Chromium on the console. */
export function watchPolicy(page: Page, violations: string[]): void {
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
}

export async function product(kit: BrowserKit, owner: TestShop, fields: Record<string, unknown> = {}) {
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

export async function fillCard(page: Page, number: string = CARDS.approved) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Name on card').fill('ANNA BUYER');
  await page.getByLabel('Expiry month (MM)').fill('12');
  await page.getByLabel('Expiry year (YYYY)').fill('2040');
  await page.getByLabel('Security code (CVC)').fill('123');
}

/** Waits until the browser reaches the shop's site, and answers the query it arrived with. */
export async function arrivedAtShop(kit: BrowserKit, page: Page): Promise<URLSearchParams> {
  await page.waitForURL((url) => url.href.startsWith(kit.shopSite.url));
  const landed = new URL(page.url());
  // The shop's server got the buyer with that query (its later hits may be the browser's favicon).
  const hit = kit.shopSite.hits.find((h) => h.pathname === landed.pathname && h.search === landed.search);
  expect(hit).toBeDefined();
  return landed.searchParams;
}

/** In afterAll: the kit stopped, no card number in any log line, nothing refused by the policy. */
export async function stopAndCheck(kit: BrowserKit | undefined, violations: string[]): Promise<void> {
  await kit?.stop();
  const all = kit?.logs.join('') ?? '';
  for (const number of Object.values(CARDS)) expect(all).not.toContain(number);
  expect(violations).toEqual([]);
}
