import { beforeAll, describe, expect, it } from 'vitest';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { client, type Harness, harness, newShop } from '../harness.js';
import { advance, frozen, payments, REAL_NOW, type Setup, setup, subscribe } from './support.js';

/** A test shop's clock moved forward through the API, billing what falls due on the way. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const START = '2026-01-31T10:00:00.000Z';
const YEAR_MS = Date.parse('2027-01-31T10:00:00.000Z') - Date.parse(REAL_NOW);

describe('POST /test_clock/advance', () => {
  it('bills a year of monthly renewals in one call, on the days the billing rules give', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await advance(s, { to: START });
      const created = await subscribe(s);
      // The subscription is created on the shop's time, not real time.
      expect(created).toMatchObject({ created_at: START, renew_at: '2026-02-28T10:00:00.000Z' });

      const done = await advance(s, { by: 'P1Y' });
      expect(done).toEqual({
        test_clock: { now: '2027-01-31T10:00:00.000Z', offset_seconds: YEAR_MS / 1000, time_zone: 'UTC' },
        advanced_from: START,
        billing: {
          runs: 12,
          charged: 12,
          successful: 12,
          failed: 0,
          errors: 0,
          unknown: 0,
          resolved: 0,
          ended: 0,
        },
        expired_checkouts: 0,
      });
      const sub = (await s.api.get(`/subscriptions/${created.id}`)).body;
      expect(sub).toMatchObject({
        state: 'active',
        paid_billing_cycles: 13,
        number_failed_payment_attempts: 0,
        renew_at: '2027-02-28T10:00:00.000Z',
        active_to: '2027-02-28T10:00:00.000Z',
      });
      const paid = await payments(h, s, created.id);
      expect(paid).toHaveLength(13);
      expect(paid.every(([, status]) => status === 'successful')).toBe(true);
      // Each renewal was charged at its own instant, in order: Jan 31 keeps the 31st through short months.
      const when = await h.db.query<{ created_at: Date }>(
        `SELECT created_at FROM transactions WHERE shop_id = $1 AND type = 'payment' ORDER BY seq`,
        [s.shop.shop.id],
      );
      expect(when.map((r) => r.created_at.toISOString().slice(0, 10))).toEqual([
        '2026-01-31',
        '2026-02-28',
        '2026-03-31',
        '2026-04-30',
        '2026-05-31',
        '2026-06-30',
        '2026-07-31',
        '2026-08-31',
        '2026-09-30',
        '2026-10-31',
        '2026-11-30',
        '2026-12-31',
        '2027-01-31',
      ]);
      const clock = await s.api.get('/test_clock');
      expect(clock.body).toEqual({ test_clock: done.test_clock });
    }));

  it('gives the same result advanced in two halves as in one go', () =>
    frozen(h, async () => {
      const once = await setup(h);
      const twice = await setup(h);
      const subs: { id: string }[] = [];
      for (const s of [once, twice]) {
        await advance(s, { to: START });
        subs.push(await subscribe(s));
      }
      const whole = await advance(once, { by: 'P1Y' });
      const first = await advance(twice, { by: 'P6M' });
      expect(first.test_clock.now).toBe('2026-07-31T10:00:00.000Z');
      const second = await advance(twice, { by: 'P6M' });
      expect(second.test_clock).toEqual(whole.test_clock);
      expect(first.billing.charged + second.billing.charged).toBe(whole.billing.charged);
      expect(first.billing.successful + second.billing.successful).toBe(12);

      const outcome = async (s: Setup, id: string) => {
        const sub = (await s.api.get(`/subscriptions/${id}`)).body;
        const { state, created_at, renew_at, active_to, paid_billing_cycles } = sub;
        const last = { status: sub.last_transaction.status, created_at: sub.last_transaction.created_at };
        return {
          state,
          created_at,
          renew_at,
          active_to,
          paid_billing_cycles,
          last,
          paid: await payments(h, s, id),
        };
      };
      const [a, b] = [await outcome(once, subs[0]?.id ?? ''), await outcome(twice, subs[1]?.id ?? '')];
      expect(a.paid).toHaveLength(13);
      expect(b).toEqual(a);
    }));

  it('uses the retry schedule set with PATCH /shop for a renewal declined after a success', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const patched = await s.api.send('PATCH', '/shop', { retry_schedule: { failed: ['PT2H'] } });
      expect(patched.status, patched.text).toBe(200);
      await advance(s, { to: '2026-03-01T09:00:00Z' });
      const created = await subscribe(s, KOPEK_CARDS.firstThenDeclined);
      expect(created.state).toBe('active');

      const done = await advance(s, { to: '2026-04-02T00:00:00Z' });
      expect(done.billing).toMatchObject({ runs: 3, charged: 3, failed: 3, successful: 0 });
      const sub = (await s.api.get(`/subscriptions/${created.id}`)).body;
      // Declined at 09:00, tried again two hours later twice (not the next day at 03:00), then failed.
      expect(sub).toMatchObject({ state: 'failed', number_failed_payment_attempts: 3, renew_at: null });
      expect(sub.cancelled_at).toBe('2026-04-01T13:00:00.000Z');
      expect(await payments(h, s, created.id)).toEqual([
        ['-1', 'successful'],
        ['-2', 'failed'],
        ['-2-2', 'failed'],
        ['-2-3', 'failed'],
      ]);
    }));

  it('asks how a 3-D Secure step nobody finishes ended once a day, and never charges its period', () =>
    frozen(h, async () => {
      const shop = await newShop(h, { threeDs: true });
      const s = { shop, api: client(h, shop) };
      const created = await subscribe(s, '4012000000001097');
      expect(created).toMatchObject({ state: 'redirecting', last_transaction: { status: 'incomplete' } });

      const done = await advance(s, { by: 'P30D' });
      // One look a day (the step still waits), not one after every five-minute lease.
      expect(done.billing).toMatchObject({ charged: 0, successful: 0 });
      expect(done.billing.runs).toBeGreaterThanOrEqual(29);
      expect(done.billing.runs).toBeLessThanOrEqual(31);
      const sub = (await s.api.get(`/subscriptions/${created.id}`)).body;
      expect(sub).toMatchObject({ state: 'redirecting', paid_billing_cycles: 0 });
      expect(await payments(h, s, created.id)).toEqual([['-1', 'incomplete']]);
    }));

  it('answers a retry with the same Idempotency-Key from its first answer, moving the clock once', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const key = { 'idempotency-key': `advance-${s.shop.shop.id}` };
      const first = await s.api.post('/test_clock/advance', { by: 'P1D' }, key);
      expect(first.status, first.text).toBe(200);
      const again = await s.api.post('/test_clock/advance', { by: 'P1D' }, key);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect((await s.api.get('/test_clock')).body.test_clock.now).toBe('2026-01-02T00:00:00.000Z');
    }));

  it('resumes a keyed advance whose answer was never stored towards its first target, adding `by` once', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const key = { 'idempotency-key': `advance-crash-${s.shop.shop.id}` };
      const first = await s.api.post('/test_clock/advance', { by: 'P1D' }, key);
      expect(first.status, first.text).toBe(200);
      // As a process killed after the clock moved and before the answer was stored leaves the key:
      // at the point its first step recorded, with the start and target.
      const [row] = await h.db.query<{ recovery_point: string; resource: unknown }>(
        `UPDATE idempotency_keys SET status_code = NULL, response_headers = NULL, response_body = NULL,
           recovery_point = 'started'
         WHERE shop_id = $1 RETURNING recovery_point, resource`,
        [s.shop.shop.id],
      );
      expect(row).toEqual({
        recovery_point: 'started',
        resource: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' },
      });
      const retry = await s.api.post('/test_clock/advance', { by: 'P1D' }, key);
      expect(retry.status, retry.text).toBe(200);
      expect(retry.body).toMatchObject({
        advanced_from: '2026-01-01T00:00:00.000Z',
        test_clock: { now: '2026-01-02T00:00:00.000Z' },
      });
      expect((await s.api.get('/test_clock')).body.test_clock.now).toBe('2026-01-02T00:00:00.000Z');
    }));

  it('adds calendar durations in the shop time zone, and reads a `to` without offset there', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await s.api.send('PATCH', '/shop', { time_zone: 'Europe/Minsk' });
      // Midnight in Minsk (UTC+3) on Jan 31, then one month on the Minsk calendar: Feb 28, 00:00 local.
      const to = await advance(s, { to: '2026-01-31' });
      expect(to.test_clock).toMatchObject({ now: '2026-01-30T21:00:00.000Z', time_zone: 'Europe/Minsk' });
      const by = await advance(s, { by: 'P1M' });
      expect(by.test_clock.now).toBe('2026-02-27T21:00:00.000Z');
    }));
});
