import { expect } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import type { Services } from '../../src/context.js';
import type { EmailRow } from '../../src/mail/repository.js';
import { type Client, client, type Harness, newShop, type TestShop } from '../harness.js';

/** A shop of its own for each test, with e-mail notifications on unless told otherwise. */
export interface MailShop {
  shop: TestShop;
  api: Client;
  id: number;
  /** The shop's notification_email. */
  shopEmail: string;
  /** A customer address no other test uses. */
  customerEmail: string;
}

export async function mailShop(h: Harness, notifications = true): Promise<MailShop> {
  const shop = await newShop(h);
  const api = client(h, shop);
  const id = shop.shop.id;
  const shopEmail = `shop${id}@shops.example.com`;
  if (notifications) {
    const res = await api.send('PATCH', '/shop', {
      email_notifications: true,
      notification_email: shopEmail,
    });
    expect(res.status, res.text).toBe(200);
  }
  return { shop, api, id, shopEmail, customerEmail: `jane${id}@example.com` };
}

/** The services a serving process has, sending through `smtpUrl` (none: e-mails are kept). */
export function mailServices(h: Harness, smtpUrl?: string): Services {
  const config = { ...h.config, smtpUrl };
  return { db: h.db, clock: h.clock, config, masterKey: h.masterKey, log: h.app.log };
}

export const card = (number = '4200000000000000') => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
});

export const gold = (extra: Record<string, unknown> = {}) => ({
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
  ...extra,
});

/** A subscription of the shop's customer, its first charge paid (or not) by `body.card`. */
export async function subscribe(s: MailShop, body: Record<string, unknown> = {}) {
  const { customer, ...rest } = body;
  const res = await s.api.post('/subscriptions', {
    plan: gold(),
    card: card(),
    ...rest,
    customer: { email: s.customerEmail, ip: '203.0.113.7', ...(customer as object | undefined) },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Runs the billing engine for the shop at the subscription's renewal instant. */
export async function renew(h: Harness, s: MailShop, subscriptionId: string): Promise<void> {
  const [row] = await h.db.query<{ renew_at: Date }>('SELECT renew_at FROM subscriptions WHERE id = $1', [
    subscriptionId,
  ]);
  if (!row?.renew_at) throw new Error('not due to renew');
  h.clock.set(row.renew_at);
  const services = mailServices(h);
  await billDue(services, { shopId: s.id });
}

export function emailsOf(h: Harness, shopId: number): Promise<EmailRow[]> {
  return h.db.query<EmailRow>('SELECT * FROM emails WHERE shop_id = $1 ORDER BY seq', [shopId]);
}

/** Runs `fn` and puts the worker's shared clock back, whatever `fn` did to it. */
export async function keepingClock<T>(h: Harness, fn: () => Promise<T>): Promise<T> {
  const before = h.clock.now();
  try {
    return await fn();
  } finally {
    h.clock.set(before);
  }
}
