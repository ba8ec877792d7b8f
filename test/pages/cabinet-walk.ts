import { createHash } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { expect } from 'vitest';
import { mailDue } from '../../src/mail/service.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import type { BrowserKit } from '../browser/kit.js';
import { signedIn } from '../cabinet/session.js';
import { newShop, type TestShop } from '../harness.js';
import { pdf } from '../proofs/files.js';

/**
 * Every page of the cabinet with something on it, for the walk in languages.browser.test.ts: one
 * test shop that did a bit of everything (subscriptions active, declined, on trial, canceled and
 * waiting for the buyer, with webhooks that fail and e-mails kept; payments paid, refunded,
 * authorized and declined; a proof, a product, a customer), and the address of each page.
 */

/** What the shop wrote: its texts stay as written on a page in any language. */
export const CABINET_SHOP_TEXTS = [
  'Lavka Tea',
  'Green tea',
  'Loose leaf',
  'Gold',
  'Gold trial',
  'Two tickets',
  'Tea set',
  'Broken cup',
  'Moved away',
  'Jane',
  'Doe',
  'JANE DOE',
  'receipt.pdf',
  'RCPT-1',
];

export interface CabinetCase {
  name: string;
  path: string;
  status?: number;
  /** Seen before signing in (the sign-in page). */
  signedOut?: boolean;
}

const DEAD = 'http://127.0.0.1:9/hook';

const card = (number = '4200000000000000') => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
});

const customer = { email: 'jane@example.com', ip: '203.0.113.7', first_name: 'Jane', last_name: 'Doe' };

export async function cabinetCases(kit: BrowserKit): Promise<{ shop: TestShop; cases: CabinetCase[] }> {
  const shop = await newShop(kit.h, { name: 'Lavka Tea' });
  const api = async (method: string, path: string, body?: unknown, status = [200, 201]) => {
    const res = await kit.api(shop, method, path, body);
    expect(status, `${method} ${path}: ${JSON.stringify(res.body)}`).toContain(res.status);
    return res.body;
  };
  await api('PATCH', '/shop', { email_notifications: true, notification_email: 'owner@lavka.example' });
  const plan = (title = 'Gold', extra: Record<string, unknown> = {}) => ({
    title,
    currency: 'RUB',
    plan: { amount: 129000, interval: 1, interval_unit: 'month' },
    ...extra,
  });
  const subscribe = (extra: Record<string, unknown>) =>
    api('POST', '/subscriptions', { plan: plan(), customer, notification_url: DEAD, ...extra });

  const active = await subscribe({
    card: card(),
    tracking_id: 'tea-club-000000000000000000000000000000000042',
  });
  const declined = await subscribe({ card: card('4005550000000019') });
  const trial = await subscribe({
    card: card(),
    plan: plan('Gold trial', { trial: { amount: 0, interval: 7, interval_unit: 'day' } }),
  });
  const canceled = await subscribe({
    card: card(),
    plan: plan('Gold', { plan: { amount: 129000, interval: 2, interval_unit: 'month' } }),
  });
  await api('POST', `/subscriptions/${canceled.id}/cancel`, { cancel_reason: 'Moved away' });
  const waiting = await subscribe({ return_url: 'https://lavka.example/back' });

  const pay = (extra: Record<string, unknown> = {}) =>
    api('POST', '/transactions/payments', {
      request: {
        amount: 1999,
        currency: 'EUR',
        description: 'Tea set',
        tracking_id: 'order-42',
        language: 'ru',
        credit_card: card(),
        ...extra,
      },
    });
  const paid = (await pay()).transaction;
  const refunded = (await pay({ amount: 4500, description: 'Two tickets' })).transaction;
  const refund = (
    await api('POST', '/transactions/refunds', {
      request: { parent_uid: refunded.uid, amount: 1500, reason: 'Broken cup' },
    })
  ).transaction;
  const failed = (await pay({ credit_card: card('4005550000000019') })).transaction;
  const authorized = (
    await api('POST', '/transactions/authorizations', {
      request: { amount: 990, currency: 'JPY', description: 'Tea set', credit_card: card() },
    })
  ).transaction;
  const document = pdf('Paid 19.99 EUR');
  const proof = (
    await api('POST', `/alt/transactions/${paid.uid}/proof`, {
      request: {
        amount: 1999,
        currency: 'EUR',
        transaction_reference: 'RCPT-1',
        document: {
          content_type: document.type,
          file_name: document.name,
          file_size: document.bytes.length,
          content: document.bytes.toString('base64'),
          checksum: createHash('sha256').update(document.bytes).digest('hex'),
        },
      },
    })
  ).transaction;
  const product = await api('POST', '/products', {
    name: 'Green tea',
    description: 'Loose leaf',
    currency: 'KWD',
    amount: 12345,
    quantity: 10,
  });
  const buyer = await api('POST', '/customers', customer);

  await deliverDue(kit.app.services, { shopId: shop.shop.id });
  await mailDue(kit.app.services, { shopId: shop.shop.id });
  const notifications = (await api('GET', `/notifications?resource_id=${active.id}`)) as Array<{
    id: string;
  }>;
  const emails = await kit.h.db.query<{ id: string }>(
    'SELECT id FROM emails WHERE shop_id = $1 ORDER BY seq',
    [shop.shop.id],
  );
  expect(notifications.length).toBeGreaterThan(0);
  expect(emails.length).toBeGreaterThan(0);

  const cases: CabinetCase[] = [
    { name: 'overview', path: '/cabinet' },
    { name: 'subscriptions', path: '/cabinet/subscriptions' },
    { name: 'subscription, active', path: `/cabinet/subscriptions/${active.id}` },
    { name: 'subscription, declined', path: `/cabinet/subscriptions/${declined.id}` },
    { name: 'subscription, on trial', path: `/cabinet/subscriptions/${trial.id}` },
    { name: 'subscription, canceled', path: `/cabinet/subscriptions/${canceled.id}` },
    { name: 'subscription, waiting for the buyer', path: `/cabinet/subscriptions/${waiting.id}` },
    { name: 'subscription, cancel', path: `/cabinet/subscriptions/${active.id}/cancel` },
    { name: 'payments', path: '/cabinet/payments' },
    { name: 'payment, paid', path: `/cabinet/payments/${paid.uid}` },
    { name: 'payment, refunded in part', path: `/cabinet/payments/${refunded.uid}` },
    { name: 'payment, the refund', path: `/cabinet/payments/${refund.uid}` },
    { name: 'payment, declined', path: `/cabinet/payments/${failed.uid}` },
    { name: 'payment, authorized', path: `/cabinet/payments/${authorized.uid}` },
    { name: 'payment, refund form', path: `/cabinet/payments/${paid.uid}/refund` },
    { name: 'payment, capture form', path: `/cabinet/payments/${authorized.uid}/capture` },
    { name: 'payment, void form', path: `/cabinet/payments/${authorized.uid}/void` },
    { name: 'products', path: '/cabinet/products' },
    { name: 'product', path: `/cabinet/products/${product.id}` },
    { name: 'customers', path: '/cabinet/customers' },
    { name: 'customer', path: `/cabinet/customers/${buyer.id}` },
    { name: 'proofs', path: '/cabinet/proofs' },
    { name: 'proof', path: `/cabinet/proofs/${proof.uid}` },
    { name: 'notifications', path: '/cabinet/notifications' },
    { name: 'notification', path: `/cabinet/notifications/${notifications[0]?.id}` },
    { name: 'e-mails', path: '/cabinet/emails' },
    { name: 'e-mail', path: `/cabinet/emails/${emails[0]?.id}` },
    { name: 'settings', path: '/cabinet/settings' },
    { name: 'test clock', path: '/cabinet/test-clock' },
    {
      // What an advance ran: every event of the shop since 2020.
      name: 'test clock, after an advance',
      path: `/cabinet/test-clock?${new URLSearchParams({
        from: '2020-01-01T00:00:00.000Z',
        to: kit.h.clock.now().toISOString(),
        runs: '1',
        charged: '1',
        successful: '1',
      })}`,
    },
    { name: 'test clock, started over', path: '/cabinet/test-clock?done=reset' },
    { name: 'not found', path: '/cabinet/subscriptions/sbs_nothing_here', status: 404 },
    { name: 'sign-in', path: '/cabinet/sign-in', signedOut: true },
    { name: 'sign-in, a wrong key', path: '/cabinet/sign-in', signedOut: true, status: 401 },
  ];
  return { shop, cases };
}

/** A browser context in `lang` at 390 px, signed in to the shop's cabinet unless `signedOut`. */
export async function cabinetContext(
  kit: BrowserKit,
  shop: TestShop,
  lang: 'en' | 'ru',
  { signedOut = false } = {},
): Promise<BrowserContext> {
  const session = signedOut ? undefined : await signedIn(kit.h, shop);
  const context = await kit.browser.newContext({
    javaScriptEnabled: false,
    // A window 390 px wide, as a desktop browser's: a phone's browser would zoom out to fit a page
    // wider than itself, and its innerWidth would grow with the page and hide the overflow.
    viewport: { width: 390, height: 844 },
  });
  await context.addCookies([
    ...[...(session?.cookies ?? [])].map(([name, value]) => ({ name, value, url: kit.base })),
    { name: 'kopek_lang', value: lang, url: kit.base },
  ]);
  return context;
}
