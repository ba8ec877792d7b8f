import { beforeAll, describe, expect, it } from 'vitest';
import { type Harness, harness } from '../harness.js';
import { advance, frozen, type Setup, setup, subscribe } from '../test-clock/support.js';

/**
 * A subscription keeps the zone its periods are counted in (its shop's zone when it was created):
 * changing the shop's time zone changes how new subscriptions are counted and how dates are shown,
 * never when an existing subscription is charged. And no renewal is charged inside the shop's quiet
 * hours. Driven as a shop would: PATCH /shop, the test clock, the API.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

async function patchShop(s: Setup, body: Record<string, unknown>): Promise<void> {
  const res = await s.api.send('PATCH', '/shop', body);
  expect(res.status, res.text).toBe(200);
}

/** When each payment of the subscription was made, in order. */
async function paidAt(s: Setup, id: string): Promise<string[]> {
  const rows = await h.db.query<{ created_at: Date }>(
    `SELECT created_at FROM transactions
     WHERE shop_id = $1 AND type = 'payment' AND status = 'successful' AND tracking_id LIKE $2 ORDER BY seq`,
    [s.shop.shop.id, `${id}-%`],
  );
  return rows.map((r) => r.created_at.toISOString());
}

/** The gaps between consecutive payments, in days. */
const gapsInDays = (at: string[]) =>
  at.slice(1).map((t, i) => (Date.parse(t) - Date.parse(at[i] as string)) / 86_400_000);

describe('a change of the shop’s time zone', () => {
  it('never charges an existing subscription twice (Asia/Tokyo → UTC)', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await patchShop(s, { time_zone: 'Asia/Tokyo' });
      await advance(s, { to: '2027-03-31T15:30:00Z' });
      const sub = await subscribe(s);
      // 1 April in Tokyo: the 1st of each month at 00:30 there.
      expect(sub.renew_at).toBe('2027-04-30T15:30:00.000Z');
      await patchShop(s, { time_zone: 'UTC' });
      await advance(s, { to: '2027-08-15T00:00:00Z' });
      const at = await paidAt(s, sub.id);
      expect(at).toEqual([
        '2027-03-31T15:30:00.000Z',
        '2027-04-30T15:30:00.000Z',
        '2027-05-31T15:30:00.000Z',
        '2027-06-30T15:30:00.000Z',
        '2027-07-31T15:30:00.000Z',
      ]);
      const read = (await s.api.get(`/subscriptions/${sub.id}`)).body;
      expect(read).toMatchObject({ paid_billing_cycles: 5, renew_at: '2027-08-31T15:30:00.000Z' });
    }));

  it('never skips a month (UTC → Europe/Minsk after the first renewal)', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await advance(s, { to: '2027-01-31T22:30:00Z' });
      const sub = await subscribe(s);
      await advance(s, { to: '2027-03-01T00:00:00Z' });
      await patchShop(s, { time_zone: 'Europe/Minsk' });
      await advance(s, { to: '2027-07-15T00:00:00Z' });
      const at = await paidAt(s, sub.id);
      expect(at).toEqual([
        '2027-01-31T22:30:00.000Z',
        '2027-02-28T22:30:00.000Z',
        '2027-03-31T22:30:00.000Z',
        '2027-04-30T22:30:00.000Z',
        '2027-05-31T22:30:00.000Z',
        '2027-06-30T22:30:00.000Z',
      ]);
      for (const gap of gapsInDays(at)) {
        expect(gap).toBeGreaterThanOrEqual(27);
        expect(gap).toBeLessThanOrEqual(32);
      }
    }));

  it('counts a subscription created after the change in the new zone', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await patchShop(s, { time_zone: 'Asia/Tokyo' });
      await advance(s, { to: '2027-03-31T15:30:00Z' });
      const before = await subscribe(s);
      await patchShop(s, { time_zone: 'UTC' });
      const after = await subscribe(s);
      // Created at the same instant: 1 April in Tokyo, 31 March in UTC.
      expect(before.renew_at).toBe('2027-04-30T15:30:00.000Z');
      expect(after.renew_at).toBe('2027-04-30T15:30:00.000Z');
      await advance(s, { to: '2027-05-15T00:00:00Z' });
      expect((await s.api.get(`/subscriptions/${before.id}`)).body.renew_at).toBe('2027-05-31T15:30:00.000Z');
      expect((await s.api.get(`/subscriptions/${after.id}`)).body.renew_at).toBe('2027-05-31T15:30:00.000Z');
      await advance(s, { to: '2027-07-15T00:00:00Z' });
      // Both keep their own day: Tokyo's 1st at 00:30 and UTC's 31st (clamped to the 30th in June).
      expect(await paidAt(s, before.id)).toContain('2027-06-30T15:30:00.000Z');
      expect(await paidAt(s, after.id)).toContain('2027-06-30T15:30:00.000Z');
    }));
});

describe('quiet hours', () => {
  it('hold back a renewal due inside them until they end, in the shop’s zone', () =>
    frozen(h, async () => {
      const s = await setup(h);
      await patchShop(s, { time_zone: 'Europe/Minsk', quiet_hours: { start: '22:00', end: '07:00' } });
      // 23:30 in Minsk (UTC+3).
      await advance(s, { to: '2027-01-10T20:30:00Z' });
      const sub = await subscribe(s);
      await advance(s, { to: '2027-03-15T00:00:00Z' });
      const at = await paidAt(s, sub.id);
      // Renewals wait for 07:00 Minsk the next morning; the billing day stays the 10th.
      expect(at).toEqual([
        '2027-01-10T20:30:00.000Z',
        '2027-02-11T04:00:00.000Z',
        '2027-03-11T04:00:00.000Z',
      ]);
      const read = (await s.api.get(`/subscriptions/${sub.id}`)).body;
      expect(read).toMatchObject({ paid_billing_cycles: 3, renew_at: '2027-04-10T20:30:00.000Z' });
    }));
});
