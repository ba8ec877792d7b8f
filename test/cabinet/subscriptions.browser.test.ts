import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { newShop, type TestShop } from '../harness.js';
import { card, cardBody, customer, monthly } from '../subscriptions/helpers.js';

/** Sign-in, the overview and the subscriptions section in real Chromium, on a desktop and a phone. */

let kit: BrowserKit;
let shop: TestShop;
const subs: Record<string, string> = {};
const DEAD = 'http://127.0.0.1:9/hook';
const EVIL = '<script>alert("plan")</script>';

beforeAll(async () => {
  kit = await startBrowserKit();
  shop = await newShop(kit.h, { name: 'Kopek Coffee Club' });
  await kit.h.db.query(`UPDATE shops SET time_zone = 'Europe/Moscow' WHERE id = $1`, [shop.shop.id]);
  const make = async (key: string, body: Record<string, unknown>) => {
    const res = await kit.api(shop, 'POST', '/subscriptions', body);
    expect(res.status).toBe(201);
    subs[key] = res.body.id;
  };
  await make(
    'webhooked',
    cardBody({ notification_url: DEAD, customer: customer({ email: 'wendy@example.com' }) }),
  );
  await make('plain', cardBody({ customer: customer({ email: 'paul@example.com' }) }));
  await make(
    'yearly',
    cardBody({
      plan: monthly({
        title: 'Beans yearly',
        currency: 'USD',
        plan: { amount: 12000, interval: 1, interval_unit: 'year' },
      }),
      customer: customer({ email: 'yuri@example.com' }),
    }),
  );
  await make(
    'declined',
    cardBody({ card: card('4005550000000019'), customer: customer({ email: 'dora@example.com' }) }),
  );
  await make(
    'evil',
    cardBody({ plan: monthly({ title: EVIL }), customer: customer({ email: 'eve@example.com' }) }),
  );
  await deliverDue(kit.app.services, { shopId: shop.shop.id });
  // A month of earlier sales, so the chart has bars to show.
  await kit.h.db.query(
    `INSERT INTO transactions (uid, shop_id, type, status, amount, currency, test, created_at, updated_at)
     SELECT gen_random_uuid(), $1, 'payment', 'successful', 1000 + (d * 137) % 4000, 'EUR', true,
       $2::timestamptz - make_interval(days => d), $2::timestamptz - make_interval(days => d)
     FROM generate_series(1, 28) AS d WHERE d % 4 <> 0`,
    [shop.shop.id, kit.h.clock.now()],
  );
}, 120_000);
afterAll(async () => {
  await kit?.stop();
});

async function signIn(page: Page, as: TestShop, secret = as.secret): Promise<void> {
  await page.goto(`${kit.base}/cabinet/sign-in`);
  await page.fill('#f-shop_id', String(as.shop.id));
  await page.fill('#f-secret_key', secret);
  await page.locator('form[action="/cabinet/sign-in"] button[type="submit"]').click();
  await page.waitForLoadState();
}

/** Fails the test on anything the page's CSP refused or a script it ran (the stored plan title). */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    // A failed load is told by the response listener below, with its address.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('response', (r) => {
    const url = new URL(r.url());
    // Browsers ask for a favicon on their own; Kopek has none.
    if (r.status() >= 400 && url.pathname !== '/favicon.ico') problems.push(`${r.status()} ${url.pathname}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  return problems;
}

describe('cabinet sign-in in Chromium', () => {
  it('refuses a wrong key, and after repeated failures refuses to check keys at all', async () => {
    const locked = await newShop(kit.h, { name: 'Locked shop' });
    let failures = 0;
    try {
      await kit.withPage(async (page) => {
        await signIn(page, locked, 'wrong-key');
        failures += 1;
        await expect(page.locator('.error-summary').textContent()).resolves.toContain(
          'The shop id or secret key is wrong.',
        );
        await kit.screenshot(page, 'cabinet-sign-in-wrong-key');
        for (let i = 0; i < 12; i++) {
          if ((await page.content()).includes('Too many sign-in attempts')) break;
          await signIn(page, locked, `wrong-${i}`);
          failures += 1;
        }
        await expect(page.content()).resolves.toContain('Too many sign-in attempts');
        // Even the right key is not checked now.
        await signIn(page, locked);
        failures += 1;
        await expect(page.content()).resolves.toContain('Too many sign-in attempts');
        expect(page.url()).toContain('/cabinet/sign-in');
        await kit.screenshot(page, 'cabinet-sign-in-too-many');
      });
    } finally {
      // Every browser test signs in from 127.0.0.1: give the address back the failures made here, in
      // the limit store the kit's app counts in (the store's table on PostgreSQL, memory on PGlite).
      await kit.app.limits.takeBack('sign-in:ip:127.0.0.1', failures);
    }
  });
});

describe('cabinet overview and subscriptions in Chromium', () => {
  it('shows the overview on a desktop and a phone', async () => {
    for (const mobile of [false, true]) {
      await kit.withPage(
        async (page) => {
          const problems = watch(page);
          await signIn(page, shop);
          expect(new URL(page.url()).pathname).toBe('/cabinet');
          await expect(page.locator('h1').textContent()).resolves.toBe('Overview');
          await expect(page.locator('svg.chart title').first().textContent()).resolves.toContain(
            'Revenue per day in EUR',
          );
          expect(await page.locator('svg.chart').first().isVisible()).toBe(true);
          await expect(
            page.locator('section[aria-labelledby="attention"] h3').allTextContents(),
          ).resolves.toContain('Latest failed charges');
          await kit.screenshot(page, mobile ? 'cabinet-overview-phone' : 'cabinet-overview');
          // A count leads to the list it counts.
          await page.locator('a[href="/cabinet/subscriptions?state=failed"]').click();
          await page.waitForURL(/state=failed/);
          await expect(page.locator('tbody tr').count()).resolves.toBe(1);
          expect(problems).toEqual([]);
        },
        { mobile },
      );
    }
  });

  it('filters the list without scripts, opens a subscription and sees its charges and notifications', async () => {
    await kit.withPage(
      async (page) => {
        const problems = watch(page);
        await signIn(page, shop);
        await page.getByRole('link', { name: 'Subscriptions', exact: true }).click();
        await page.waitForURL(/\/cabinet\/subscriptions$/);
        await expect(page.locator('tbody tr').count()).resolves.toBe(5);
        // The stored plan title is text on the page, and no script of it ran.
        await expect(page.locator('tbody').textContent()).resolves.toContain(EVIL);
        await kit.screenshot(page, 'cabinet-subscriptions');

        await page.fill('#f-email', 'WENDY');
        await page.selectOption('#f-state', 'active');
        await page.getByRole('button', { name: 'Filter' }).click();
        await page.waitForURL(/email=/);
        await expect(page.locator('tbody tr').count()).resolves.toBe(1);
        await kit.screenshot(page, 'cabinet-subscriptions-filtered');

        await page.getByRole('link', { name: subs.webhooked as string }).click();
        await page.waitForURL(new RegExp(`/cabinet/subscriptions/${subs.webhooked}$`));
        const timeline = page.locator('ol.timeline');
        await expect(timeline.textContent()).resolves.toContain('Charge of period 1, attempt 1');
        await expect(timeline.textContent()).resolves.toContain('activated.subscription');
        await expect(timeline.locator('.attempts li').first().textContent()).resolves.toMatch(
          /Attempt 1: .*no answer/,
        );
        await expect(page.locator('dl.details').textContent()).resolves.toContain('GMT+3');
        await kit.screenshot(page, 'cabinet-subscription');
        expect(problems).toEqual([]);
      },
      { javaScriptEnabled: false },
    );
  });

  it('cancels a subscription through its confirmation step', async () => {
    await kit.withPage(async (page) => {
      const problems = watch(page);
      await signIn(page, shop);
      await page.goto(`${kit.base}/cabinet/subscriptions/${subs.plain}`);
      await page.getByRole('link', { name: 'Cancel subscription' }).click();
      await page.waitForURL(/\/cancel$/);
      await expect(page.locator('h1').textContent()).resolves.toContain(`Cancel subscription ${subs.plain}?`);
      // Nothing is cancelled by reaching the confirmation.
      expect((await kit.api(shop, 'GET', `/subscriptions/${subs.plain}`)).body.state).toBe('active');
      await kit.screenshot(page, 'cabinet-subscription-cancel');
      await page.fill('#f-cancel_reason', 'Asked by phone to stop');
      await page.getByRole('button', { name: 'Cancel the subscription' }).click();
      await page.waitForURL(/done=canceled/);
      await expect(page.locator('.notice').textContent()).resolves.toBe('The subscription is canceled.');
      expect(await page.getByRole('link', { name: 'Cancel subscription' }).count()).toBe(0);
      await expect(page.locator('ol.timeline').textContent()).resolves.toContain('canceled.subscription');
      await kit.screenshot(page, 'cabinet-subscription-canceled');
      const viewed = (await kit.api(shop, 'GET', `/subscriptions/${subs.plain}`)).body;
      expect(viewed).toMatchObject({ state: 'canceled', cancel_reason: 'Asked by phone to stop' });
      expect(problems).toEqual([]);
    });
  });

  it('fits a phone: the list and a subscription', async () => {
    await kit.withPage(
      async (page) => {
        await signIn(page, shop);
        await page.goto(`${kit.base}/cabinet/subscriptions`);
        await kit.screenshot(page, 'cabinet-subscriptions-phone');
        await page.goto(`${kit.base}/cabinet/subscriptions/${subs.declined}`);
        await expect(page.locator('dl.details').textContent()).resolves.toContain('Payment was declined');
        // The page itself never scrolls sideways; only a wide table inside its own box may.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await kit.screenshot(page, 'cabinet-subscription-phone');
      },
      { mobile: true, locale: 'ru-RU' },
    );
  });
});
