import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { charge } from '../gateway/helpers.js';
import { newShop, type TestShop } from '../harness.js';

/**
 * Payments, products, customers and proofs of the cabinet in real Chromium: a refund through its
 * confirmation step, the Copy button of a payment link, a proof's preview and download. Screenshots
 * of each page are kept under test-artifacts/screenshots/.
 */

let kit: BrowserKit;
const violations: string[] = [];

beforeAll(async () => {
  kit = await startBrowserKit();
}, 120_000);

afterAll(async () => {
  await kit?.stop();
  expect(violations).toEqual([]);
});

function watchPolicy(page: Page): void {
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
}

async function signIn(page: Page, shop: TestShop): Promise<void> {
  watchPolicy(page);
  await page.goto(`${kit.base}/cabinet/sign-in`);
  await page.fill('#f-shop_id', String(shop.shop.id));
  await page.fill('#f-secret_key', shop.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/cabinet(\?|$|\/)/);
}

/** A real PNG (a small striped picture), so the preview shows an image. */
function png(width = 240, height = 120): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows: number[] = [];
  for (let y = 0; y < height; y++) {
    rows.push(0);
    for (let x = 0; x < width; x++) rows.push(...(Math.floor(x / 20) % 2 ? [31, 111, 235] : [241, 245, 249]));
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('cabinet payments, products, customers and proofs in Chromium', () => {
  it('lists payments, opens one and refunds part of it after confirming, then shows the refund', async () => {
    const shop = await newShop(kit.h, { name: 'Corner <Shop>' });
    for (const amount of [1250, 4999]) {
      const res = await kit.api(shop, 'POST', '/transactions/payments', {
        request: charge({
          amount,
          description: `Order of ${amount}`,
          customer: { email: 'buyer@example.com', ip: '10.1.1.1' },
        }),
      });
      expect(res.status).toBe(200);
    }
    const auth = await kit.api(shop, 'POST', '/transactions/authorizations', {
      request: charge({ amount: 800 }),
    });
    expect(auth.status).toBe(200);
    await kit.withPage(async (page) => {
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/payments`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Payments');
      await kit.screenshot(page, 'cabinet-payments');
      await page.locator('tr', { hasText: '€49.99' }).getByRole('link').first().click();
      await page.waitForURL(/\/cabinet\/payments\/[0-9a-f-]{36}$/);
      await kit.screenshot(page, 'cabinet-payment');
      await page.getByRole('link', { name: 'Refund', exact: true }).click();
      await expect(page.locator('#f-amount').inputValue()).resolves.toBe('49.99');
      await page.fill('#f-amount', '10.00');
      await page.fill('#f-reason', 'Returned one item');
      await kit.screenshot(page, 'cabinet-payment-refund');
      await page.getByRole('button', { name: 'Review' }).click();
      await expect(page.locator('.question').textContent()).resolves.toContain('Refund €10.00 of');
      await kit.screenshot(page, 'cabinet-payment-refund-confirm');
      await page.getByRole('button', { name: 'Yes, refund €10.00' }).click();
      await page.waitForURL(/done=refund/);
      await expect(page.getByRole('status').first().textContent()).resolves.toBe('Refunded.');
      const refundRow = page.locator('section[aria-labelledby="family"] tr', {
        hasText: 'Returned one item',
      });
      await expect(refundRow.textContent()).resolves.toContain('€10.00');
      await kit.screenshot(page, 'cabinet-payment-refunded');
      // The refund's own page links back to its payment.
      await refundRow.getByRole('link', { name: 'Refund' }).click();
      await expect(page.getByRole('link', { name: /Payment €49\.99/ }).count()).resolves.toBe(1);
    });
    // On a phone, without scripts: the list and the authorization's actions still work.
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        await page.goto(`${kit.base}/cabinet/payments?type=authorization`);
        await kit.screenshot(page, 'cabinet-payments-phone');
        await page.goto(`${kit.base}/cabinet/payments/${auth.body.transaction.uid}/void`);
        await page.getByRole('button', { name: 'Yes, void it' }).click();
        await page.waitForURL(/done=void/);
        await kit.screenshot(page, 'cabinet-payment-voided-phone');
      },
      { mobile: true, javaScriptEnabled: false },
    );
  });

  it("copies a product's payment link with the Copy button; without scripts the link is selectable", async () => {
    const shop = await newShop(kit.h, { name: 'Product shop' });
    const res = await kit.api(shop, 'POST', '/products', {
      name: 'Guitar lessons <script>alert(1)</script>',
      description: 'Ten lessons\nonline',
      currency: 'EUR',
      amount: 15000,
      quantity: 4,
    });
    expect(res.status).toBe(201);
    await kit.withPage(async (page, context) => {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: kit.base });
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/products`);
      await kit.screenshot(page, 'cabinet-products');
      await page.getByRole('link', { name: 'Guitar lessons <script>alert(1)</script>' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe(
        'Guitar lessons <script>alert(1)</script>',
      );
      await page.locator('button[data-copy="pay-url"]').click();
      // The clipboard answers asynchronously: wait for the live region to say so.
      await page.locator('#pay-url-copied', { hasText: 'Copied to the clipboard.' }).waitFor();
      await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(res.body.pay_url);
      await kit.screenshot(page, 'cabinet-product');
    });
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        await page.goto(`${kit.base}/cabinet/products/${res.body.id}`);
        await expect(page.locator('button[data-copy="pay-url"]').isVisible()).resolves.toBe(false);
        await expect(page.locator('#pay-url').inputValue()).resolves.toBe(res.body.pay_url);
      },
      { javaScriptEnabled: false },
    );
  });

  it('finds a customer and opens their page', async () => {
    const shop = await newShop(kit.h, { name: 'Customer shop' });
    const made = await kit.api(shop, 'POST', '/customers', {
      email: 'Jane@Example.com',
      ip: '10.0.0.2',
      first_name: 'Jane',
      last_name: 'Doe',
      city: 'Riga',
      country: 'LV',
    });
    expect(made.status).toBe(201);
    await kit.api(shop, 'POST', '/customers', { email: 'other@example.com', ip: '10.0.0.3' });
    await kit.withPage(async (page) => {
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/customers`);
      await page.fill('#f-q', 'jane@example.com');
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
      await kit.screenshot(page, 'cabinet-customers');
      await page.getByRole('link', { name: made.body.id }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Jane Doe');
      await kit.screenshot(page, 'cabinet-customer');
    });
  });

  it("previews an image proof and downloads it; another shop's proof is not found", async () => {
    const shop = await newShop(kit.h, { name: 'Proof shop' });
    const paid = await kit.api(shop, 'POST', '/transactions/payments', { request: charge({ amount: 1000 }) });
    const bytes = png();
    const proof = await kit.api(shop, 'POST', `/alt/transactions/${paid.body.transaction.uid}/proof`, {
      request: {
        amount: 1000,
        currency: 'EUR',
        transaction_reference: 'BANK-42',
        document: {
          content_type: 'image/png',
          file_name: 'bank transfer.png',
          file_size: bytes.length,
          content: bytes.toString('base64'),
          checksum: createHash('sha256').update(bytes).digest('hex'),
        },
      },
    });
    expect(proof.status).toBe(200);
    const uid = proof.body.transaction.uid as string;
    await kit.withPage(async (page) => {
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/proofs`);
      await kit.screenshot(page, 'cabinet-proofs');
      await page.getByRole('link', { name: 'bank transfer.png' }).click();
      await page.waitForURL(new RegExp(`/cabinet/proofs/${uid}$`));
      const natural = await page
        .locator('img.proof-preview')
        .evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0));
      expect(natural).toBe(240);
      await kit.screenshot(page, 'cabinet-proof');
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download bank transfer.png' }).click(),
      ]);
      expect(download.suggestedFilename()).toBe('bank transfer.png');
      // The run's browser is shared over a connection: the download is streamed back, not read in place.
      const stream = await download.createReadStream();
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    });
    const other = await newShop(kit.h, { name: 'Other shop' });
    await kit.withPage(async (page) => {
      await signIn(page, other);
      const res = await page.goto(`${kit.base}/cabinet/proofs/${uid}`);
      expect(res?.status()).toBe(404);
      const download = await page.goto(`${kit.base}/cabinet/proofs/${uid}/download`);
      expect(download?.status()).toBe(404);
    });
  });
});
