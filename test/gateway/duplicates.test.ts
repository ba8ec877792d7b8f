import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { DUPLICATE_WINDOW_MS } from '../../src/gateway/charge.js';
import { sweepFingerprints } from '../../src/gateway/repository.js';
import { startFingerprintSweep } from '../../src/gateway/sweep.js';
import { withClock } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const later = <T>(ms: number, fn: () => Promise<T>) => withClock(g.h, ms, fn);

describe('duplicate_check', () => {
  it('declines the same card, amount, currency and tracking_id within 30 seconds', async () => {
    const first = (await g.pay({ tracking_id: 'dup-1' })).body.transaction;
    const second = await later(29_000, () => g.pay({ tracking_id: 'dup-1' }));
    expect(second.status).toBe(200);
    expect(second.body.transaction).toMatchObject({
      status: 'failed',
      message: `Duplicate transaction: the same card, amount, currency and tracking_id were sent within 30 seconds (transaction ${first.uid}). Check its status instead of charging again, or send duplicate_check false`,
      payment: { status: 'failed', ref_id: null, auth_code: null },
    });
  });

  it('knows the card by its stamp: a token of the same number is the same card', async () => {
    const first = (await g.pay({ tracking_id: 'dup-2' })).body.transaction;
    const byToken = await g.pay({ tracking_id: 'dup-2', credit_card: { token: first.credit_card.token } });
    expect(byToken.body.transaction.status).toBe('failed');
  });

  it('lets the same charge through after 30 seconds, and a declined duplicate does not extend the window', async () => {
    await g.pay({ tracking_id: 'dup-3' });
    expect((await later(20_000, () => g.pay({ tracking_id: 'dup-3' }))).body.transaction.status).toBe(
      'failed',
    );
    expect((await later(31_000, () => g.pay({ tracking_id: 'dup-3' }))).body.transaction.status).toBe(
      'successful',
    );
  });

  it('lets exactly one of several identical charges sent at once through', async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => g.pay({ tracking_id: 'dup-race' })));
    const statuses = answers.map((a) => a.body.transaction.status).sort();
    expect(statuses).toEqual(['failed', 'failed', 'failed', 'failed', 'successful']);
  });

  it('lets the same charge through with duplicate_check false', async () => {
    await g.pay({ tracking_id: 'dup-4' });
    expect((await g.pay({ tracking_id: 'dup-4', duplicate_check: false })).body.transaction.status).toBe(
      'successful',
    );
  });

  it('treats another amount, currency, tracking_id, card or transaction type as another charge', async () => {
    await g.pay({ tracking_id: 'dup-5' });
    for (const extra of [
      { amount: 2000 },
      { currency: 'USD' },
      { tracking_id: 'dup-5b' },
      { credit_card: card('4111111111111111') },
    ]) {
      expect(
        (await g.pay({ tracking_id: 'dup-5', ...extra })).body.transaction.status,
        JSON.stringify(extra),
      ).toBe('successful');
    }
    expect((await g.authorize({ tracking_id: 'dup-5' })).body.transaction.status).toBe('successful');
  });

  it('leaves a charge sent with duplicate_check false out of the check, for later charges too', async () => {
    await g.pay({ tracking_id: 'dup-7', duplicate_check: false });
    const checked = (await later(10_000, () => g.pay({ tracking_id: 'dup-7' }))).body.transaction;
    expect(checked.status).toBe('successful');
    // The checked one holds the fingerprint now: the next checked one is its duplicate.
    const again = await later(20_000, () => g.pay({ tracking_id: 'dup-7' }));
    expect(again.body.transaction.message).toContain(`(transaction ${checked.uid})`);
  });

  it('declines a duplicate of a new card and still keeps the card it brought', async () => {
    const first = (await g.pay({ tracking_id: 'dup-8' })).body.transaction;
    const second = (await g.pay({ tracking_id: 'dup-8' })).body.transaction;
    expect(second.status).toBe('failed');
    expect(second.credit_card.token).not.toBe(first.credit_card.token);
    const [stored] = await g.h.db.query('SELECT stamp FROM cards WHERE token = $1', [
      second.credit_card.token,
    ]);
    expect(stored).toEqual({ stamp: first.credit_card.stamp });
  });

  // The sweeps below run on the store every test shares: they sweep a moment in 2001, which no other
  // test's charges are near, and leave everything else alone.
  const Y2001 = '2001-01-01T00:00:00.000Z';

  it('forgets fingerprints only once their window has passed', async () => {
    await withClock(g.h, Y2001, () => g.pay({ tracking_id: 'dup-9a' }));
    await withClock(g.h, '2000-12-31T23:59:00.000Z', () => g.pay({ tracking_id: 'dup-9b' }));
    const heldBy = async (tracking: string) =>
      (
        await g.h.db.query(
          `SELECT 1 FROM charge_fingerprints f JOIN transactions t ON t.uid = f.first_uid
           WHERE t.shop_id = $1 AND t.tracking_id = $2`,
          [g.shop.shop.id, tracking],
        )
      ).length;
    expect(await sweepFingerprints(g.h.db, new Date(new Date(Y2001).getTime() - DUPLICATE_WINDOW_MS))).toBe(
      1,
    );
    expect(await heldBy('dup-9a')).toBe(1);
    expect(await heldBy('dup-9b')).toBe(0);
    // The young one still decides; the swept one's charge is a new charge.
    await withClock(g.h, '2001-01-01T00:00:10.000Z', async () => {
      expect((await g.pay({ tracking_id: 'dup-9a' })).body.transaction.status).toBe('failed');
      expect((await g.pay({ tracking_id: 'dup-9b' })).body.transaction.status).toBe('successful');
    });
  });

  it('sweeps on a timer in the background', async () => {
    await withClock(g.h, '2001-06-01T00:00:00.000Z', () => g.pay({ tracking_id: 'dup-10' }));
    const clock = new ManualClock(new Date('2001-06-01T00:01:00.000Z'));
    const count = async () =>
      (
        await g.h.db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM charge_fingerprints WHERE shop_id = $1 AND at < $2',
          [g.shop.shop.id, new Date('2001-06-01T00:00:30.000Z')],
        )
      )[0]?.n;
    expect(await count()).toBeGreaterThan(0);
    const stop = startFingerprintSweep({ db: g.h.db, clock, log: g.h.app.log }, 10);
    try {
      await vi.waitFor(async () => expect(await count()).toBe(0), { timeout: 5000, interval: 20 });
    } finally {
      stop();
    }
  });

  it('checks within one shop only', async () => {
    await g.pay({ tracking_id: 'dup-6' });
    const other = await gatewayShop();
    expect((await other.pay({ tracking_id: 'dup-6' })).body.transaction.status).toBe('successful');
  });
});
