import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { charge } from '../gateway/helpers.js';
import { newShop, type TestShop } from '../harness.js';
import { cardBody, customer, monthly } from '../subscriptions/helpers.js';

/**
 * The cabinet's walls in real Chromium: a shop signed in through the real form cannot see another
 * shop's objects by typing their addresses (each is "Not found", naming nothing of the other shop),
 * a form posted without its CSRF token is refused and changes nothing, and markup a shop's clients
 * stored is shown as text without running. Screenshots under test-artifacts/screenshots/.
 */

let kit: BrowserKit;
let shopA: TestShop;
let shopB: TestShop;
// Nothing listens on the discard port: every delivery is refused at once, and listed.
const DEAD = 'http://127.0.0.1:9/hook';
const EVIL_PLAN = '<script>alert("plan")</script>';
const EVIL_NAME = '<img src=x onerror=alert("name")><script>alert("customer")</script>';

/** Shop A's objects. */
const a = { subscription: '', evilSubscription: '', evilCustomer: '' };
/** Shop B's objects, and every word of B that must never appear on A's pages. */
const b = {
  subscription: '',
  payment: '',
  product: '',
  customer: '',
  notification: '',
  proof: '',
  secrets: [] as string[],
};

async function proofOf(owner: TestShop, parent: string): Promise<string> {
  const bytes = Buffer.from('%PDF-1.4\nBravo receipt\n%%EOF');
  const res = await kit.api(owner, 'POST', `/alt/transactions/${parent}/proof`, {
    request: {
      amount: 1999,
      currency: 'EUR',
      transaction_reference: 'BRAVO-RCPT-77',
      skip_duplicate_check: true,
      document: {
        content_type: 'application/pdf',
        file_name: 'bravo-receipt.pdf',
        file_size: bytes.length,
        content: bytes.toString('base64'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      },
    },
  });
  expect(res.status).toBe(200);
  return res.body.transaction.uid as string;
}

beforeAll(async () => {
  kit = await startBrowserKit();
  shopA = await newShop(kit.h, { name: 'Alpha Beans' });
  shopB = await newShop(kit.h, { name: 'Bravo Leaf Secrets' });

  const subA = await kit.api(shopA, 'POST', '/subscriptions', cardBody());
  expect(subA.status).toBe(201);
  a.subscription = subA.body.id;
  // Markup stored by A's own clients: a plan title and a customer's names.
  const evilCustomer = await kit.api(shopA, 'POST', '/customers', {
    email: 'mallory@example.com',
    first_name: EVIL_NAME,
    last_name: EVIL_PLAN,
    ip: '203.0.113.9',
  });
  expect(evilCustomer.status).toBe(201);
  a.evilCustomer = evilCustomer.body.id;
  const evilSub = await kit.api(
    shopA,
    'POST',
    '/subscriptions',
    cardBody({ plan: monthly({ title: EVIL_PLAN }), customer: { id: a.evilCustomer } }),
  );
  expect(evilSub.status).toBe(201);
  a.evilSubscription = evilSub.body.id;

  const subB = await kit.api(
    shopB,
    'POST',
    '/subscriptions',
    cardBody({
      plan: monthly({ title: 'Bravo Platinum Plan' }),
      customer: customer({ email: 'bertha.bravo@example.com' }),
      notification_url: DEAD,
      tracking_id: 'bravo-track-42',
    }),
  );
  expect(subB.status).toBe(201);
  b.subscription = subB.body.id;
  await deliverDue(kit.app.services, { shopId: shopB.shop.id });
  const [event] = await kit.h.db.query<{ id: number }>(
    `SELECT event_id::int AS id FROM deliveries WHERE shop_id = $1 ORDER BY event_id LIMIT 1`,
    [shopB.shop.id],
  );
  expect(event).toBeDefined();
  b.notification = `evt_${event?.id}`;

  const pay = await kit.api(shopB, 'POST', '/transactions/payments', {
    request: charge({ description: 'Bravo secret order', tracking_id: 'bravo-order-99' }),
  });
  expect(pay.status).toBe(200);
  b.payment = pay.body.transaction.uid;
  b.proof = await proofOf(shopB, b.payment);

  const product = await kit.api(shopB, 'POST', '/products', {
    name: 'Bravo Oolong Reserve',
    description: 'Not for Alpha.',
    currency: 'EUR',
    amount: 3100,
    language: 'en',
  });
  expect(product.status).toBe(201);
  b.product = product.body.id;

  const cust = await kit.api(shopB, 'POST', '/customers', {
    email: 'carla.bravo@example.com',
    first_name: 'Carla',
    last_name: 'Bravissima',
    ip: '203.0.113.8',
  });
  expect(cust.status).toBe(201);
  b.customer = cust.body.id;

  // B's name, its plan, product, customers' names and e-mails, tracking ids and file name all say
  // "bravo"; its objects' ids are the rest.
  b.secrets = [
    'bravo',
    'Bravo',
    'bertha',
    'Carla',
    b.subscription,
    b.payment,
    b.product,
    b.customer,
    b.notification,
    b.proof,
  ];
}, 120_000);

afterAll(async () => {
  await kit?.stop();
});

async function signIn(page: Page, as: TestShop): Promise<void> {
  await page.goto(`${kit.base}/cabinet/sign-in`);
  await page.fill('#f-shop_id', String(as.shop.id));
  await page.fill('#f-secret_key', as.secret);
  await page.locator('form[action="/cabinet/sign-in"] button[type="submit"]').click();
  await page.waitForURL(/\/cabinet(\?|$|\/)/);
  expect(new URL(page.url()).pathname).toBe('/cabinet');
}

/** Any dialog (a stored script that ran) or page error fails the test. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  return problems;
}

describe('another shop’s objects by address', () => {
  it('answers Not found for each of them, and shows nothing of the other shop', async () => {
    await kit.withPage(async (page) => {
      const problems = watch(page);
      await signIn(page, shopA);
      const paths = [
        `/cabinet/subscriptions/${b.subscription}`,
        `/cabinet/subscriptions/${b.subscription}/cancel`,
        `/cabinet/payments/${b.payment}`,
        `/cabinet/payments/${b.payment}/refund`,
        `/cabinet/products/${b.product}`,
        `/cabinet/customers/${b.customer}`,
        `/cabinet/notifications/${b.notification}`,
        `/cabinet/proofs/${b.proof}`,
        `/cabinet/proofs/${b.proof}/download`,
        `/cabinet/proofs/${b.proof}/preview`,
      ];
      for (const path of paths) {
        const res = await page.goto(`${kit.base}${path}`);
        expect(res?.status(), path).toBe(404);
        expect(await page.locator('h1').textContent(), path).toBe('Not found');
        const body = (await page.locator('body').textContent()) ?? '';
        expect(body, path).toContain('There is nothing here, or it belongs to another shop.');
        const html = await page.content();
        for (const secret of b.secrets) {
          expect(html, `${path} shows ${secret}`).not.toContain(secret);
        }
        if (path === `/cabinet/subscriptions/${b.subscription}`)
          await kit.screenshot(page, 'cabinet-not-found');
      }
      // The way back leads to A's own cabinet, still signed in.
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.waitForURL(/\/cabinet$/);
      expect(await page.locator('h1').textContent()).toBe('Overview');
      expect(problems).toEqual([]);
    });
    // Nothing of B changed on the way.
    expect((await kit.api(shopB, 'GET', `/subscriptions/${b.subscription}`)).body.state).toBe('active');
  });

  it('refuses A’s own cancel form pointed at B’s subscription', async () => {
    await kit.withPage(async (page) => {
      const problems = watch(page);
      await signIn(page, shopA);
      await page.goto(`${kit.base}/cabinet/subscriptions/${a.subscription}/cancel`);
      const form = page.locator('form:has(#f-cancel_reason)');
      // A valid token, a valid session, someone else's subscription.
      await form.evaluate((f: HTMLFormElement, target: string) => {
        f.action = target;
      }, `/cabinet/subscriptions/${b.subscription}/cancel`);
      await page.fill('#f-cancel_reason', 'Not mine to cancel');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Cancel the subscription' }).click(),
      ]);
      expect(answer.status()).toBe(404);
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('Not found');
      for (const secret of b.secrets) expect(await page.content()).not.toContain(secret);
      expect(problems).toEqual([]);
    });
    expect((await kit.api(shopB, 'GET', `/subscriptions/${b.subscription}`)).body.state).toBe('active');
    expect((await kit.api(shopA, 'GET', `/subscriptions/${a.subscription}`)).body.state).toBe('active');
  });
});

describe('a form without its CSRF token', () => {
  it('is refused with "form has expired", and the subscription stays active', async () => {
    await kit.withPage(async (page) => {
      const problems = watch(page);
      await signIn(page, shopA);
      await page.goto(`${kit.base}/cabinet/subscriptions/${a.subscription}/cancel`);
      expect(await page.locator('h1').textContent()).toContain(`Cancel subscription ${a.subscription}?`);
      const form = page.locator('form:has(#f-cancel_reason)');
      expect(await form.locator('input[name="_csrf"]').count()).toBe(1);
      await form.evaluate((f: HTMLFormElement) => {
        for (const input of f.querySelectorAll('input[name="_csrf"]')) input.remove();
      });
      expect(await form.locator('input[name="_csrf"]').count()).toBe(0);
      await page.fill('#f-cancel_reason', 'Posted without a token');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Cancel the subscription' }).click(),
      ]);
      expect(answer.status()).toBe(403);
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('This form has expired');
      expect(await page.locator('body').textContent()).toContain('could not be sent');
      await kit.screenshot(page, 'cabinet-form-refused');
      expect(problems).toEqual([]);
    });
    const sub = (await kit.api(shopA, 'GET', `/subscriptions/${a.subscription}`)).body;
    expect(sub.state).toBe('active');
    expect(sub.cancel_reason ?? null).toBeNull();
  });
});

describe('markup stored by a shop’s clients', () => {
  it('is shown as text on the lists and pages, and no script of it runs', async () => {
    await kit.withPage(async (page) => {
      const problems = watch(page);
      await signIn(page, shopA);

      await page.goto(`${kit.base}/cabinet/subscriptions`);
      expect(await page.locator('tbody').textContent()).toContain(EVIL_PLAN);
      await page.goto(`${kit.base}/cabinet/subscriptions/${a.evilSubscription}`);
      expect(await page.locator('main').textContent()).toContain(EVIL_PLAN);

      await page.goto(`${kit.base}/cabinet/customers`);
      expect(await page.locator('tbody').textContent()).toContain(EVIL_NAME);
      await page.goto(`${kit.base}/cabinet/customers/${a.evilCustomer}`);
      const main = page.locator('main');
      expect(await main.textContent()).toContain(EVIL_NAME);
      expect(await main.textContent()).toContain(EVIL_PLAN);
      // Text, not elements: no image or script came from the stored names.
      expect(await main.locator('img[src="x"], script').count()).toBe(0);
      await kit.screenshot(page, 'cabinet-stored-markup');

      expect(await page.evaluate(() => document.querySelectorAll('script:not([src])').length)).toBe(0);
      expect(problems).toEqual([]);
    });
  });
});
