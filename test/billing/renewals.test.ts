import { beforeAll, describe, expect, it } from 'vitest';
import { type BillingSummary, billDue, LEASE_MS } from '../../src/billing/renew.js';
import { findCardRowsByTokens } from '../../src/cards/repository.js';
import { type Services, shopCtx } from '../../src/context.js';
import { gatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS, LATE_ANSWER_MS } from '../../src/gateway/test-cards.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';

/**
 * The billing engine in simulated time: the worker's clock is set to each due instant and the engine
 * runs what is due, for one shop only (the store is shared with other test files).
 */

let h: Harness;
let services: Services;

beforeAll(async () => {
  h = await harness();
  services = { db: h.db, clock: h.clock, config: h.config, masterKey: h.masterKey, log: h.app.log };
});

const card = (number = '4200000000000000') => ({
  number,
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
});

const monthly = (extra: Record<string, unknown> = {}) => ({
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
  ...extra,
});

interface Setup {
  shop: TestShop;
  api: Client;
}

async function setup(timeZone?: string): Promise<Setup> {
  const shop = await newShop(h);
  // Before the shop's first request, which caches it.
  if (timeZone) await h.db.query('UPDATE shops SET time_zone = $2 WHERE id = $1', [shop.shop.id, timeZone]);
  return { shop, api: client(h, shop) };
}

async function subscribe(s: Setup, body: Record<string, unknown> = {}) {
  const res = await s.api.post('/subscriptions', {
    plan: monthly(),
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    card: card(),
    ...body,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const read = async (s: Setup, id: string) => (await s.api.get(`/subscriptions/${id}`)).body;

/** Runs the engine for the shop at instant `at` (the worker's clock is put back afterwards by callers). */
function billAt(s: Setup, at: Date | string): Promise<BillingSummary> {
  h.clock.set(at);
  return billDue(services, { shopId: s.shop.shop.id });
}

async function payments(s: Setup, id: string) {
  return h.db.query<{ status: string; tracking_id: string; amount: number }>(
    `SELECT status, tracking_id, amount FROM transactions
     WHERE shop_id = $1 AND type = 'payment' AND tracking_id LIKE $2 ORDER BY seq`,
    [s.shop.shop.id, `${id}-%`],
  );
}

async function eventsOf(id: string): Promise<string[]> {
  const rows = await h.db.query<{ event: string }>(
    'SELECT event FROM events WHERE resource_id = $1 ORDER BY id',
    [id],
  );
  return rows.map((r) => r.event);
}

/** Every instant at which the subscription is due, followed until it is not due any more. */
async function billThrough(s: Setup, id: string, until: string): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < 100; i++) {
    const sub = await read(s, id);
    const [row] = await h.db.query<{ renew_at: Date | null; cancelled_at: Date | null }>(
      'SELECT renew_at, cancelled_at FROM subscriptions WHERE id = $1',
      [sub.id],
    );
    if (!row?.renew_at || row.cancelled_at || row.renew_at.toISOString() > until) break;
    seen.push(row.renew_at.toISOString());
    await billAt(s, row.renew_at);
  }
  return seen;
}

async function withSavedClock<T>(fn: () => Promise<T>): Promise<T> {
  const before = h.clock.now();
  try {
    return await fn();
  } finally {
    h.clock.set(before);
  }
}

describe('renewals', () => {
  it('bills a year of monthly periods from Jan 31, keeping the 31st through short months', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-01-31T10:00:00.000Z');
      const created = await subscribe(s);
      const dates = await billThrough(s, created.id, '2027-01-31T10:00:00.000Z');
      expect(dates).toEqual([
        '2026-02-28T10:00:00.000Z',
        '2026-03-31T10:00:00.000Z',
        '2026-04-30T10:00:00.000Z',
        '2026-05-31T10:00:00.000Z',
        '2026-06-30T10:00:00.000Z',
        '2026-07-31T10:00:00.000Z',
        '2026-08-31T10:00:00.000Z',
        '2026-09-30T10:00:00.000Z',
        '2026-10-31T10:00:00.000Z',
        '2026-11-30T10:00:00.000Z',
        '2026-12-31T10:00:00.000Z',
        '2027-01-31T10:00:00.000Z',
      ]);
      const after = await read(s, created.id);
      expect(after).toMatchObject({
        state: 'active',
        paid_billing_cycles: 13,
        number_failed_payment_attempts: 0,
        renew_at: '2027-02-28T10:00:00.000Z',
        active_to: '2027-02-28T10:00:00.000Z',
      });
      const paid = await payments(s, created.id);
      expect(paid).toHaveLength(13);
      expect(paid.every((p) => p.status === 'successful' && p.amount === 1999)).toBe(true);
      expect(new Set(paid.map((p) => p.tracking_id)).size).toBe(13);
      const events = await eventsOf(created.id);
      expect(events.filter((e) => e === 'renewed.subscription')).toHaveLength(12);
      expect(events.slice(0, 2)).toEqual(['created.subscription', 'activated.subscription']);
    }));

  it('keeps the local day and time of month periods in a shop time zone, across DST', () =>
    withSavedClock(async () => {
      const s = await setup('America/New_York');
      // Jan 31, 21:30 in New York is already Feb 1 in UTC: the local day is what the shop bills by.
      h.clock.set('2026-02-01T02:30:00.000Z');
      const created = await subscribe(s);
      const dates = await billThrough(s, created.id, '2026-06-01T00:00:00.000Z');
      expect(dates).toEqual([
        '2026-03-01T02:30:00.000Z', // Feb 28, 21:30 EST
        '2026-04-01T01:30:00.000Z', // Mar 31, 21:30 EDT: the clocks moved, the local time did not
        '2026-05-01T01:30:00.000Z', // Apr 30, 21:30 EDT
      ]);
      expect((await read(s, created.id)).renew_at).toBe('2026-06-01T01:30:00.000Z'); // May 31, 21:30 EDT
    }));

  it('bills an hourly plan every 3,600 s across a DST change in a non-UTC shop', () =>
    withSavedClock(async () => {
      const s = await setup('America/New_York');
      // New York falls back at 06:00 UTC on Nov 1, 2026: 01:00-02:00 local happens twice.
      h.clock.set('2026-11-01T03:00:00.000Z');
      const created = await subscribe(s, {
        plan: monthly({ plan: { amount: 500, interval: 1, interval_unit: 'hour' } }),
      });
      const dates = await billThrough(s, created.id, '2026-11-01T09:00:00.000Z');
      expect(dates).toEqual(
        [4, 5, 6, 7, 8, 9].map((hour) => `2026-11-01T${String(hour).padStart(2, '0')}:00:00.000Z`),
      );
      expect(await payments(s, created.id)).toHaveLength(7);
    }));

  it('charges nothing before a subscription is due, and nothing twice when run again', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s);
      expect((await billAt(s, '2026-03-31T08:59:59.999Z')).charged).toBe(0);
      expect((await billAt(s, '2026-04-01T09:00:00.000Z')).successful).toBe(1);
      expect((await billAt(s, '2026-04-01T09:00:00.000Z')).charged).toBe(0);
      expect(await payments(s, created.id)).toHaveLength(2);
    }));

  it('retries a renewal declined after earlier successes, then fails and cancels when attempts run out', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s, { card: card(KOPEK_CARDS.firstThenDeclined) });
      expect(created.state).toBe('active');
      await billAt(s, '2026-04-01T09:00:00.000Z');
      // The platform's rule: the next day at 03:00 in the shop's time zone (UTC by default).
      expect(await read(s, created.id)).toMatchObject({
        state: 'active',
        number_failed_payment_attempts: 1,
        renew_at: '2026-04-02T03:00:00.000Z',
      });
      await billAt(s, '2026-04-02T03:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({
        number_failed_payment_attempts: 2,
        renew_at: '2026-04-03T03:00:00.000Z',
      });
      await billAt(s, '2026-04-03T03:00:00.000Z');
      const ended = await read(s, created.id);
      expect(ended).toMatchObject({ state: 'failed', number_failed_payment_attempts: 3, renew_at: null });
      expect(ended.cancelled_at).toBe('2026-04-03T03:00:00.000Z');
      // Three attempts at period 2, each its own transaction, none charged twice.
      const paid = await payments(s, created.id);
      expect(paid.map((p) => [p.tracking_id.slice(created.id.length), p.status])).toEqual([
        ['-1', 'successful'],
        ['-2', 'failed'],
        ['-2-2', 'failed'],
        ['-2-3', 'failed'],
      ]);
      expect(await eventsOf(created.id)).toContain('failed.subscription');
      expect((await billAt(s, '2026-06-01T09:00:00.000Z')).charged).toBe(0);
    }));

  it('retries errors hourly, ends in error; a successful retry keeps the original billing day', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-05-31T12:00:00.000Z');
      const created = await subscribe(s);
      const [{ card_token: token } = { card_token: '' }] = await h.db.query<{ card_token: string }>(
        'SELECT card_token FROM subscriptions WHERE id = $1',
        [created.id],
      );
      // A token the gateway does not know: it refuses the charge, which the contract counts as error.
      await h.db.query(`UPDATE subscriptions SET card_token = 'unknown-token' WHERE id = $1`, [created.id]);
      await billAt(s, '2026-06-30T12:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({
        state: 'active',
        number_failed_payment_attempts: 1,
        renew_at: '2026-06-30T13:00:00.000Z',
      });
      await h.db.query('UPDATE subscriptions SET card_token = $2 WHERE id = $1', [created.id, token]);
      await billAt(s, '2026-06-30T13:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({
        state: 'active',
        paid_billing_cycles: 2,
        number_failed_payment_attempts: 0,
        renew_at: '2026-07-31T12:00:00.000Z',
      });

      await h.db.query(`UPDATE subscriptions SET card_token = 'unknown-token' WHERE id = $1`, [created.id]);
      await billAt(s, '2026-07-31T12:00:00.000Z');
      await billAt(s, '2026-07-31T13:00:00.000Z');
      await billAt(s, '2026-07-31T14:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({
        state: 'error',
        number_failed_payment_attempts: 3,
        renew_at: null,
        cancelled_at: '2026-07-31T14:00:00.000Z',
      });
      expect(await eventsOf(created.id)).toEqual(
        expect.arrayContaining(['error.subscription', 'canceled.subscription']),
      );
    }));

  it('never charges a subscription cancelled while a retry was pending', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s, { card: card(KOPEK_CARDS.firstThenDeclined) });
      await billAt(s, '2026-04-01T09:00:00.000Z');
      h.clock.set('2026-04-01T10:00:00.000Z');
      const canceled = await s.api.post(`/subscriptions/${created.id}/cancel`, {
        cancel_reason: 'moving away',
      });
      expect(canceled.body.state).toBe('canceled');
      expect((await billAt(s, '2026-04-02T03:00:00.000Z')).charged).toBe(0);
      expect(await payments(s, created.id)).toHaveLength(2);
    }));

  it('ends a finite plan with its last paid period, canceled with a reason', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-01-10T09:00:00.000Z');
      const created = await subscribe(s, { plan: monthly({ infinite: false, billing_cycles: 3 }) });
      await billThrough(s, created.id, '2026-12-31T00:00:00.000Z');
      const ended = await read(s, created.id);
      expect(ended).toMatchObject({
        state: 'canceled',
        paid_billing_cycles: 3,
        active_to: '2026-04-10T09:00:00.000Z',
        cancelled_at: '2026-04-10T09:00:00.000Z',
      });
      expect(ended.cancel_reason).toMatch(/billing cycles/);
      expect(await payments(s, created.id)).toHaveLength(3);
    }));

  it('counts a paid trial with as_first_payment as the first of the billing cycles', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-01-10T09:00:00.000Z');
      const created = await subscribe(s, {
        plan: monthly({
          infinite: false,
          billing_cycles: 3,
          trial: { amount: 500, interval: 1, interval_unit: 'month', as_first_payment: true },
        }),
      });
      await billThrough(s, created.id, '2026-12-31T00:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({ state: 'canceled', paid_billing_cycles: 2 });
      expect((await payments(s, created.id)).map((p) => p.amount)).toEqual([500, 1999, 1999]);
    }));

  it('charges nothing during a free trial, then bills the first period when it ends', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-02-01T09:00:00.000Z');
      const created = await subscribe(s, {
        plan: monthly({ trial: { amount: 0, interval: 14, interval_unit: 'day' } }),
      });
      expect(created).toMatchObject({ state: 'trial', renew_at: '2026-02-15T09:00:00.000Z' });
      expect(await payments(s, created.id)).toHaveLength(0);
      await billAt(s, '2026-02-15T09:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({
        state: 'active',
        paid_billing_cycles: 1,
        renew_at: '2026-03-15T09:00:00.000Z',
      });
      expect(await eventsOf(created.id)).toEqual([
        'created.subscription',
        'trial_started.subscription',
        'trial_ended.subscription',
        'activated.subscription',
      ]);
    }));

  it('charges a paid trial at once and the plan when the trial ends', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-02-01T09:00:00.000Z');
      const created = await subscribe(s, {
        plan: monthly({ trial: { amount: 100, interval: 1, interval_unit: 'week' } }),
      });
      expect(created.state).toBe('trial');
      await billAt(s, '2026-02-08T09:00:00.000Z');
      expect(await read(s, created.id)).toMatchObject({ state: 'active', paid_billing_cycles: 1 });
      expect((await payments(s, created.id)).map((p) => p.amount)).toEqual([100, 1999]);
    }));

  it('resolves a timed-out renewal by query after its lease, without a second charge', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s);
      const token = await s.api.post('/credit_cards', {
        request: { credit_card: card(KOPEK_CARDS.timeout) },
      });
      await h.db.query('UPDATE subscriptions SET card_token = $2 WHERE id = $1', [
        created.id,
        token.body.token,
      ]);
      const first = await billAt(s, '2026-04-01T09:00:00.000Z');
      expect(first.unknown).toBe(1);
      expect(await read(s, created.id)).toMatchObject({ paid_billing_cycles: 1 });
      // Still leased: not due, not charged again.
      expect((await billAt(s, '2026-04-01T09:01:00.000Z')).charged).toBe(0);
      const later = new Date(Date.parse('2026-04-01T09:00:00.000Z') + Math.max(LEASE_MS, LATE_ANSWER_MS));
      const second = await billAt(s, later);
      expect(second).toMatchObject({ charged: 0, resolved: 1 });
      expect(await read(s, created.id)).toMatchObject({ state: 'active', paid_billing_cycles: 2 });
      expect(await payments(s, created.id)).toHaveLength(2);
    }));

  it('charges an attempt that a crash left claimed but never sent, once', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s);
      // What a process that died between its claim and the gateway leaves: a pending attempt, leased.
      await h.db.query(
        `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, created_at, updated_at, shop_id)
         VALUES ($1, 2, 1, 1999, 'EUR', 'pending', $2, $2, (SELECT shop_id FROM subscriptions WHERE id = $1))`,
        [created.id, new Date('2026-04-01T09:00:00.000Z')],
      );
      await h.db.query('UPDATE subscriptions SET renew_at = $2 WHERE id = $1', [
        created.id,
        new Date('2026-04-01T09:05:00.000Z'),
      ]);
      const run = await billAt(s, '2026-04-01T09:05:00.000Z');
      expect(run).toMatchObject({ resolved: 1, successful: 1 });
      const paid = await payments(s, created.id);
      expect(paid.map((p) => p.tracking_id.slice(created.id.length))).toEqual(['-1', '-2-2']);
      const charges = await h.db.query<{ attempt: number; status: string }>(
        'SELECT attempt, status FROM subscription_charges WHERE subscription_id = $1 AND period = 2 ORDER BY attempt',
        [created.id],
      );
      expect(charges).toEqual([
        { attempt: 1, status: 'abandoned' },
        { attempt: 2, status: 'successful' },
      ]);
    }));

  it('fails a first payment that a crash left claimed but never sent, charging nothing', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s);
      // Made to look like a subscription whose process died between claiming its first charge and
      // asking the gateway: processing, the claim open, due when the claim's lease ends.
      await h.db.query(
        `UPDATE subscriptions SET state = 'processing', paid_billing_cycles = 0, renew_at = $2, active_to = NULL
         WHERE id = $1`,
        [created.id, new Date('2026-03-01T09:05:00.000Z')],
      );
      await h.db.query(
        `UPDATE subscription_charges SET status = 'pending', transaction_uid = NULL, period = 1, attempt = 2
         WHERE subscription_id = $1`,
        [created.id],
      );
      const run = await billAt(s, '2026-03-01T09:05:00.000Z');
      expect(run).toMatchObject({ resolved: 1, charged: 0 });
      const ended = await read(s, created.id);
      expect(ended).toMatchObject({
        state: 'failed',
        renew_at: null,
        cancelled_at: '2026-03-01T09:05:00.000Z',
      });
      expect(ended.cancel_reason).toMatch(/never reached the gateway/);
      expect(await payments(s, created.id)).toHaveLength(1);
    }));

  it('resolves a timed-out first payment by query once its lease ends', () =>
    withSavedClock(async () => {
      const s = await setup();
      h.clock.set('2026-03-01T09:00:00.000Z');
      const created = await subscribe(s, { card: card(KOPEK_CARDS.timeout) });
      expect(created).toMatchObject({ state: 'processing', renew_at: null });
      const later = new Date(Date.parse('2026-03-01T09:00:00.000Z') + Math.max(LEASE_MS, LATE_ANSWER_MS));
      const run = await billAt(s, later);
      expect(run).toMatchObject({ resolved: 1, charged: 0 });
      expect(await read(s, created.id)).toMatchObject({
        state: 'active',
        paid_billing_cycles: 1,
        renew_at: '2026-04-01T09:00:00.000Z',
      });
      expect(await payments(s, created.id)).toHaveLength(1);
    }));

  it("never takes another shop's card from the cards a batch has read", async () => {
    const s = await setup();
    const other = await setup();
    const theirs = await subscribe(other);
    const [card] = await findCardRowsByTokens(h.db, [theirs.card.token]);
    if (!card) throw new Error('card missing');
    const ctx = shopCtx(services, s.shop.shop);
    const request = {
      amount: 100,
      currency: 'EUR',
      description: 'Renewal',
      tracking_id: 'cross-shop',
      duplicate_check: false,
      credit_card: { token: card.token, skip_three_d_secure_verification: true },
    };
    await expect(
      gatewayClient(ctx).planPayment?.(request, new Map([[card.token, card]])),
    ).rejects.toMatchObject({
      code: 'validation',
    });
  });

  it('the store refuses a second successful charge of one period', async () => {
    const s = await setup();
    const created = await subscribe(s);
    const insert = h.db.query(
      `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, created_at, updated_at, shop_id)
       VALUES ($1, 1, 2, 1999, 'EUR', 'successful', now(), now(), (SELECT shop_id FROM subscriptions WHERE id = $1))`,
      [created.id],
    );
    await expect(insert).rejects.toMatchObject({ code: '23505' });
  });
});
