import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailDue } from '../../src/mail/service.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { newShop, type TestShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';

/** The notifications, e-mails, settings and test clock pages in real Chromium, without and with JS. */

let kit: BrowserKit;
beforeAll(async () => {
  kit = await startBrowserKit();
}, 120_000);
afterAll(async () => {
  await kit?.stop();
});

const DEAD = 'http://127.0.0.1:9/hook';

async function signIn(page: Page, shop: TestShop): Promise<void> {
  await page.goto(`${kit.base}/cabinet/sign-in`);
  await page.fill('#f-shop_id', String(shop.shop.id));
  await page.fill('#f-secret_key', shop.secret);
  await page.click('form[action="/cabinet/sign-in"] button[type=submit]');
  await page.waitForURL(/\/cabinet(\?|$|\/)/);
}

/** A test shop with e-mail notifications on, one subscription whose webhooks go nowhere, its mail kept. */
async function busyShop(): Promise<{ shop: TestShop; sub: string }> {
  const shop = await newShop(kit.h, { name: 'Shop <b>bold</b>' });
  const patched = await kit.api(shop, 'PATCH', '/shop', {
    email_notifications: true,
    notification_email: `owner${shop.shop.id}@shop.example`,
  });
  expect(patched.status).toBe(200);
  const res = await kit.api(shop, 'POST', '/subscriptions', cardBody({ notification_url: DEAD }));
  expect(res.status).toBe(201);
  await deliverDue(kit.app.services, { shopId: shop.shop.id });
  await mailDue(kit.app.services, { shopId: shop.shop.id });
  return { shop, sub: res.body.id };
}

describe('cabinet notifications, e-mails, settings and test clock in Chromium', () => {
  it('re-sends a failed notification', async () => {
    const { shop } = await busyShop();
    const [event] = await kit.h.db.query<{ id: string }>(
      `SELECT event_id::text AS id FROM deliveries WHERE shop_id = $1 ORDER BY event_id LIMIT 1`,
      [shop.shop.id],
    );
    await kit.h.db.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1`,
      [event?.id],
    );
    await kit.withPage(async (page) => {
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/notifications?status=failed`);
      await kit.screenshot(page, 'cabinet-notifications');
      await page.getByRole('link', { name: `evt_${event?.id}` }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe(`Notification evt_${event?.id}`);
      await expect(page.locator('pre.headers').textContent()).resolves.toContain('Content-Signature: ');
      await kit.screenshot(page, 'cabinet-notification');
      await page.getByRole('button', { name: 'Re-send' }).click();
      await page.waitForURL(/done=resent/);
      await expect(page.getByRole('status').textContent()).resolves.toContain('a new attempt is due now');
      await expect(page.locator('.details .badge').first().textContent()).resolves.toBe('Pending');
      await kit.screenshot(page, 'cabinet-notification-resent');
    });
    const [after] = await kit.h.db.query<{ status: string }>(
      'SELECT status FROM deliveries WHERE event_id = $1',
      [event?.id],
    );
    expect(after?.status).toBe('pending');
  });

  it('shows an e-mail with its HTML in a sandboxed frame', async () => {
    const { shop } = await busyShop();
    await kit.withPage(async (page) => {
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/emails`);
      await kit.screenshot(page, 'cabinet-emails');
      await page.getByRole('link', { name: /^Receipt:/ }).click();
      await expect(page.locator('pre.email-text').textContent()).resolves.toContain('Thank you');
      const frame = page.frameLocator('iframe.email-html');
      await expect(frame.locator('h1').textContent()).resolves.toContain('Thank you for your payment');
      await kit.screenshot(page, 'cabinet-email');
    });
  });

  it('changes a setting, without JavaScript too, and shows a mistake beside its field', async () => {
    const shop = await newShop(kit.h);
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        await page.goto(`${kit.base}/cabinet/settings`);
        await page.check('#f-three_d_secure');
        await page.selectOption('#f-time_zone', 'Europe/Minsk');
        await page.fill('#f-return_url', 'ftp://nope');
        await page.getByRole('button', { name: 'Save settings' }).click();
        await expect(page.locator('#f-return_url-error').textContent()).resolves.toContain(
          'absolute address',
        );
        await kit.screenshot(page, 'cabinet-settings-invalid');
        await page.fill('#f-return_url', 'https://shop.example/back');
        await page.getByRole('button', { name: 'Save settings' }).click();
        await page.waitForURL(/done=saved/);
        await expect(page.getByRole('status').textContent()).resolves.toBe('Settings saved.');
        await kit.screenshot(page, 'cabinet-settings');
      },
      { javaScriptEnabled: false },
    );
    const api = (await kit.api(shop, 'GET', '/shop')).body;
    expect(api).toMatchObject({
      three_d_secure: true,
      time_zone: 'Europe/Minsk',
      return_url: 'https://shop.example/back',
    });
  });

  it('advances a test clock and shows the renewal appear, on a phone', async () => {
    const { shop, sub } = await busyShop();
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        await page.goto(`${kit.base}/cabinet/settings`);
        await page.getByRole('link', { name: 'Open the test clock' }).click();
        await kit.screenshot(page, 'cabinet-test-clock');
        await page.fill('#f-amount', '1');
        await page.selectOption('#f-unit', 'months');
        await page.getByRole('button', { name: 'Advance', exact: true }).click();
        await page.waitForURL(/from=/);
        const row = page.locator('tr.clock-event', { hasText: 'renewed.subscription' });
        await expect(row.locator('a').textContent()).resolves.toBe(sub);
        await kit.screenshot(page, 'cabinet-test-clock-advanced');
      },
      { mobile: true },
    );
  });

  it('speaks Russian', async () => {
    const { shop } = await busyShop();
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        for (const [path, name] of [
          ['/cabinet/settings', 'settings'],
          ['/cabinet/notifications', 'notifications'],
          ['/cabinet/emails', 'emails'],
        ] as const) {
          await page.goto(`${kit.base}${path}`);
          await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ru');
          await kit.screenshot(page, `cabinet-${name}-ru`);
        }
        await expect(page.locator('h1').textContent()).resolves.toBe('Письма');
      },
      { locale: 'ru-RU' },
    );
  });
});
