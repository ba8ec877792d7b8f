import { beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { GatewayTimeout } from '../../src/gateway/errors.js';
import { KOPEK_CARDS, LATE_ANSWER_MS } from '../../src/gateway/test-cards.js';
import { historyOf } from '../../src/ledger/repository.js';
import { harness, withClock } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const ctxOf = (g: GatewayShop) => ({ ...g.h.app.services, shop: g.shop.shop });

const later = <T>(g: GatewayShop, ms: number, fn: () => Promise<T>) => withClock(g.h, ms, fn);

describe('Kopek card: gateway error', () => {
  it('answers status error with the provider message', async () => {
    const g = await gatewayShop();
    const res = await g.pay({ credit_card: card(KOPEK_CARDS.error) });
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({
      status: 'error',
      message: 'Provider system error. Contact the payment service provider for details.',
      paid_at: null,
      payment: { status: 'error', auth_code: null },
    });
  });
});

describe('Kopek card: successful first, declined afterwards', () => {
  it('approves the first charge of the card in a shop and declines every later one', async () => {
    const g = await gatewayShop();
    const first = (await g.pay({ credit_card: card(KOPEK_CARDS.firstThenDeclined) })).body.transaction;
    expect(first.status).toBe('successful');
    for (const credit_card of [card(KOPEK_CARDS.firstThenDeclined), { token: first.credit_card.token }]) {
      const t = (await g.pay({ credit_card })).body.transaction;
      expect(t).toMatchObject({ status: 'failed', message: 'Insufficient funds' });
    }
    const elsewhere = await gatewayShop();
    expect(
      (await elsewhere.pay({ credit_card: card(KOPEK_CARDS.firstThenDeclined) })).body.transaction.status,
    ).toBe('successful');
  });

  it('approves only one of several first charges sent at once, even without the duplicate check', async () => {
    const g = await gatewayShop();
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        g.pay({
          tracking_id: `race-${i}`,
          duplicate_check: false,
          credit_card: card(KOPEK_CARDS.firstThenDeclined),
        }),
      ),
    );
    const statuses = answers.map((a) => a.body.transaction.status).sort();
    expect(statuses).toEqual(['failed', 'failed', 'failed', 'successful']);
  });

  it('counts a successful authorization as the first charge; a declined one does not count', async () => {
    const g = await gatewayShop();
    const auth = await g.authorize({ credit_card: card(KOPEK_CARDS.firstThenDeclined) });
    expect(auth.body.transaction.status).toBe('successful');
    expect((await g.pay({ credit_card: card(KOPEK_CARDS.firstThenDeclined) })).body.transaction.status).toBe(
      'failed',
    );
  });
});

describe('Kopek card: the acquirer does not answer in time', () => {
  it('answers 504 over HTTP; the transaction is pending until the late answer, then successful', async () => {
    const g = await gatewayShop();
    const res = await g.pay({ tracking_id: 'slow-1', credit_card: card(KOPEK_CARDS.timeout) });
    expect(res.status).toBe(504);
    const message =
      'The acquirer did not answer in time; the outcome is unknown. Query the transaction by tracking_id before charging again';
    expect(res.body).toEqual({
      response: {
        message: `${message}.`,
        errors: { base: [message] },
        uid: expect.any(String),
        tracking_id: 'slow-1',
      },
    });

    const pending = (await g.api.get('/v2/transactions/tracking_id/slow-1')).body.transactions;
    expect(pending).toHaveLength(1);
    expect(pending[0].uid).toBe(res.body.response.uid);
    expect(pending[0]).toMatchObject({
      status: 'pending',
      message: null,
      paid_at: null,
      payment: { status: 'pending' },
    });
    const uid = pending[0].uid;
    expect(
      (await later(g, LATE_ANSWER_MS - 1000, () => g.api.get(`/transactions/${uid}`))).body.transaction
        .status,
    ).toBe('pending');

    const settled = await later(g, LATE_ANSWER_MS, () => g.api.get(`/transactions/${uid}`));
    expect(settled.body.transaction).toMatchObject({
      status: 'successful',
      message: 'Successfully processed',
      paid_at: expect.any(String),
      payment: { status: 'successful' },
    });
    const again = (await g.api.get('/v2/transactions/tracking_id/slow-1')).body.transactions;
    expect(again.map((t: { status: string }) => t.status)).toEqual(['successful']);
    expect((await historyOf(g.h.db, uid)).map((r) => r.status)).toEqual(['pending', 'successful']);
  });

  it('rejects with GatewayTimeout in-process, carrying the uid and tracking_id to query', async () => {
    const g = await gatewayShop();
    const client = new InProcessGatewayClient(ctxOf(g));
    const attempt = client.payment({
      amount: 500,
      currency: 'EUR',
      description: 'Renewal',
      tracking_id: 'slow-2',
      credit_card: card(KOPEK_CARDS.timeout),
    });
    await expect(attempt).rejects.toBeInstanceOf(GatewayTimeout);
    const err = (await attempt.catch((e: unknown) => e)) as GatewayTimeout;
    expect(err.trackingId).toBe('slow-2');
    expect((await client.query(err.uid as string))?.status).toBe('pending');
  });

  it('can be refunded once the late answer has come', async () => {
    const g = await gatewayShop();
    await g.pay({ tracking_id: 'slow-3', credit_card: card(KOPEK_CARDS.timeout) });
    const uid = (await g.api.get('/v2/transactions/tracking_id/slow-3')).body.transactions[0].uid;
    const early = await g.send('/transactions/refunds', { parent_uid: uid, amount: 100, reason: 'r' });
    expect(early.status).toBe(422);
    const refund = await later(g, LATE_ANSWER_MS, () =>
      g.send('/transactions/refunds', { parent_uid: uid, amount: 100, reason: 'r' }),
    );
    expect(refund.body.transaction.status).toBe('successful');
  });
});

describe('credits', () => {
  it('sends money to a card by token, without a CVC', async () => {
    const g = await gatewayShop();
    const token = (await g.pay()).body.transaction.credit_card.token;
    const res = await g.send('/transactions/credits', {
      amount: 3000,
      currency: 'EUR',
      description: 'Payout',
      tracking_id: 'payout-1',
      credit_card: { token },
    });
    expect(res.body.transaction).toMatchObject({
      type: 'credit',
      status: 'successful',
      amount: 3000,
      credit: { status: 'successful', message: 'Credit was approved' },
    });
    expect(res.body.transaction.avs_cvc_verification).toBeUndefined();
  });

  it('declines a credit to the declining card', async () => {
    const g = await gatewayShop();
    const res = await g.send('/transactions/credits', {
      amount: 3000,
      currency: 'EUR',
      description: 'Payout',
      credit_card: card('4005550000000019', { verification_value: undefined }),
    });
    expect(res.body.transaction).toMatchObject({ status: 'failed', message: 'Credit was declined' });
  });
});
