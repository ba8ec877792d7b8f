import { beforeAll, describe, expect, it } from 'vitest';
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

  it('checks within one shop only', async () => {
    await g.pay({ tracking_id: 'dup-6' });
    const other = await gatewayShop();
    expect((await other.pay({ tracking_id: 'dup-6' })).body.transaction.status).toBe('successful');
  });
});
