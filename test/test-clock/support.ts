import { expect } from 'vitest';
import { type Client, client, type Harness, newShop, type TestShop, withClock } from '../harness.js';

/**
 * Real time in these tests is the worker's ManualClock, frozen at REAL_NOW while a test runs (and put
 * back after): a test shop's time is that plus the shop's own offset, so every date is exact.
 */
export const REAL_NOW = '2026-01-01T00:00:00.000Z';

export interface Setup {
  shop: TestShop;
  api: Client;
}

export async function setup(h: Harness, input: { test?: boolean } = {}): Promise<Setup> {
  const shop = await newShop(h, input);
  return { shop, api: client(h, shop) };
}

/** Runs `fn` with real time frozen at REAL_NOW. */
export const frozen = <T>(h: Harness, fn: () => Promise<T>) => withClock(h, REAL_NOW, fn);

export const card = (number = '4200000000000000') => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
});

export const monthly = () => ({
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
});

export async function subscribe(s: Setup, number?: string) {
  const res = await s.api.post('/subscriptions', {
    plan: monthly(),
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    card: card(number),
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export async function advance(s: Setup, body: unknown, headers?: Record<string, string>) {
  const res = await s.api.post('/test_clock/advance', body, headers);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The payments of a subscription as (tracking id suffix, status), first first. */
export async function payments(h: Harness, s: Setup, id: string): Promise<[string, string][]> {
  const rows = await h.db.query<{ status: string; tracking_id: string }>(
    `SELECT status, tracking_id FROM transactions
     WHERE shop_id = $1 AND type = 'payment' AND tracking_id LIKE $2 ORDER BY seq`,
    [s.shop.shop.id, `${id}-%`],
  );
  return rows.map((r) => [r.tracking_id.slice(id.length), r.status]);
}
