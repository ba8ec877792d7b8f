import { expect } from 'vitest';
import type { CreateShopInput } from '../../src/shops/service.js';
import { type Client, client, type Harness, harness, newShop, type TestShop, withClock } from '../harness.js';

/** Fixtures and small probes shared by the subscription tests. The clock starts in January 2026. */

export const monthly = (extra: Record<string, unknown> = {}) => ({
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
  ...extra,
});

export const card = (number = '4200000000000000', extra: Record<string, unknown> = {}) => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2030',
  ...extra,
});

export const customer = (extra: Record<string, unknown> = {}) => ({
  email: 'jane@example.com',
  ip: '203.0.113.7',
  ...extra,
});

/** A card-variant request: customer data, a new monthly plan and a full card. */
export const cardBody = (extra: Record<string, unknown> = {}) => ({
  plan: monthly(),
  customer: customer(),
  card: card(),
  ...extra,
});

export interface SubShop {
  h: Harness;
  shop: TestShop;
  api: Client;
}

export async function subShop(input: CreateShopInput = {}): Promise<SubShop> {
  const h = await harness();
  const shop = await newShop(h, input);
  return { h, shop, api: client(h, shop) };
}

/** The card record a subscription returns for `number` given as `card()` gives it. */
export const cardRecord = (number: string, brand = 'visa', extra: Record<string, unknown> = {}) => ({
  holder: 'JANE DOE',
  stamp: expect.stringMatching(/^[0-9a-f]{64}$/),
  brand,
  last_4: number.slice(-4),
  first_1: number.slice(0, 1),
  bin: number.slice(0, 6),
  issuer_country: null,
  issuer_name: null,
  product: null,
  token: expect.stringMatching(/^[0-9A-Za-z]{64}$/),
  token_provider: null,
  exp_month: 12,
  exp_year: 2030,
  ...extra,
});

/** The plan a subscription returns for `monthly(extra)` created by shop `shopId`. */
export const planView = (shopId: number, extra: Record<string, unknown> = {}) => ({
  id: expect.stringMatching(/^pln_/),
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
  trial: null,
  language: 'en',
  infinite: true,
  billing_cycles: null,
  number_payment_attempts: 3,
  test: true,
  shop_id: shopId,
  created_at: expect.any(String),
  updated_at: expect.any(String),
  ...extra,
});

export const customerView = (extra: Record<string, unknown> = {}) => ({
  id: expect.stringMatching(/^cst_/),
  first_name: null,
  last_name: null,
  address: null,
  city: null,
  country: null,
  zip: null,
  state: null,
  phone: null,
  ...customer(),
  ...extra,
});

/** The optional request fields as a subscription answers them when none was sent. */
export const noExtras = {
  tracking_id: null,
  device_id: null,
  return_url: null,
  notification_url: null,
  additional_data: {},
  receipt_text: null,
  avs_cvc_verification: null,
  settings: null,
  language: 'en',
  dynamic_billing_descriptor: null,
};

export interface PaymentRow {
  uid: string;
  amount: number;
  currency: string;
  status: string;
  tracking_id: string | null;
}

/** Every payment the gateway recorded for the shop: what "charged once" is counted on. */
export function paymentsOf(h: Harness, shop: TestShop): Promise<PaymentRow[]> {
  return h.db.query<PaymentRow>(
    "SELECT uid, amount, currency, status, tracking_id FROM transactions WHERE shop_id = $1 AND type = 'payment' ORDER BY seq",
    [shop.shop.id],
  );
}

export async function countRows(
  h: Harness,
  table: 'subscriptions' | 'plans' | 'customers',
  shop: TestShop,
): Promise<number> {
  const [row] = await h.db.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM ${table} WHERE shop_id = $1`,
    [shop.shop.id],
  );
  return Number(row?.n);
}

/** Runs `fn` with the shared clock set to `at`, and puts it back afterwards whatever happens. */
export const atTime = <T>(h: Harness, at: string, fn: () => Promise<T>) => withClock(h, at, fn);

export const addMonthsIso = (iso: string, months: number) => {
  const d = new Date(iso);
  d.setUTCMonth(d.getUTCMonth() + months);
  return d.toISOString();
};
