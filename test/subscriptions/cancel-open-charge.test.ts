import { beforeAll, describe, expect, it, vi } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { type Harness, harness, withClock } from '../harness.js';
import { card, cardBody, paymentsOf, type SubShop, subShop } from './helpers.js';

/**
 * A cancel ends the subscription's open charge (decisions.md, "A cancel ends the open charge"): a
 * 3-D Secure page still open for it refuses to complete, money that settles anyway is given back at
 * once, and the shop hears of every money movement.
 */

const CHALLENGE = '4012000000001097';
const CANCELLED_BY_SHOP = 'This payment was cancelled by the shop';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

async function transactionsOf(s: SubShop) {
  return h.db.query<{
    uid: string;
    type: string;
    status: string;
    amount: number;
    parent_uid: string | null;
    message: string | null;
  }>(
    'SELECT uid, type, status, amount, parent_uid, message FROM transactions WHERE shop_id = $1 ORDER BY seq',
    [s.shop.shop.id],
  );
}

async function transactionEvents(s: SubShop): Promise<string[]> {
  const rows = await h.db.query<{ event: string; resource_id: string }>(
    "SELECT event, resource_id FROM events WHERE shop_id = $1 AND resource_type = 'transaction' ORDER BY id",
    [s.shop.shop.id],
  );
  return rows.map((r) => `${r.event} ${r.resource_id}`);
}

describe('a cancel while the first charge waits for 3-D Secure', () => {
  it('ends the step: the page refuses to complete it and no money moves', async () => {
    const s = await subShop({ threeDs: true });
    const created = await s.api.post('/subscriptions', cardBody({ card: card(CHALLENGE) }));
    expect(created.status, created.text).toBe(201);
    const uid = created.body.last_transaction.uid as string;
    expect(created.body).toMatchObject({ state: 'redirecting', last_transaction: { status: 'incomplete' } });

    const cancelled = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'No' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ state: 'canceled', paid_billing_cycles: 0 });

    // The cardholder now passes authentication on the page the shop's server forwards.
    const passed = await s.api.post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(passed.status, passed.text).toBe(200);
    expect(passed.body.transaction).toMatchObject({ uid, status: 'failed', message: CANCELLED_BY_SHOP });
    // The browser's page says so too, and offers no challenge.
    const page = await h.app.inject({ method: 'GET', url: `/process/${uid}` });
    expect(page.body).toContain(CANCELLED_BY_SHOP);
    expect(page.body).not.toContain('name="outcome"');

    expect((await paymentsOf(h, s.shop)).filter((p) => p.status === 'successful')).toEqual([]);
    const read = await s.api.get(`/subscriptions/${created.body.id}`);
    expect(read.body).toMatchObject({
      state: 'canceled',
      paid_billing_cycles: 0,
      last_transaction: { uid, status: 'failed', message: CANCELLED_BY_SHOP },
    });
    expect(await transactionEvents(s)).toEqual([
      `incomplete.transaction ${uid}`,
      `failed.transaction ${uid}`,
    ]);
  });
});

describe('a cancel while the first charge’s outcome is unknown', () => {
  it('refunds at once the payment that settles as successful afterwards, and announces it', async () => {
    const s = await subShop();
    const created = await s.api.post('/subscriptions', cardBody({ card: card(KOPEK_CARDS.timeout) }));
    expect(created.status, created.text).toBe(201);
    const cancelled = await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'No' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body).toMatchObject({ state: 'canceled', paid_billing_cycles: 0 });

    // Ten minutes later the acquirer's late answer is in, and billing asks about the open attempt.
    await withClock(h, 10 * 60_000, () => billDue(h.app.services, { shopId: s.shop.shop.id }));

    const txs = await transactionsOf(s);
    const payment = txs.find((t) => t.type === 'payment');
    expect(payment).toMatchObject({ status: 'successful', amount: 1999 });
    const refunds = txs.filter((t) => t.type === 'refund');
    expect(refunds).toEqual([
      expect.objectContaining({ status: 'successful', amount: 1999, parent_uid: payment?.uid }),
    ]);
    const read = await s.api.get(`/subscriptions/${created.body.id}`);
    expect(read.body).toMatchObject({ state: 'canceled', paid_billing_cycles: 0, active_to: null });
    expect(await transactionEvents(s)).toContain(`successful.transaction ${refunds[0]?.uid}`);

    // Billing again gives nothing back twice.
    await withClock(h, 20 * 60_000, () => billDue(h.app.services, { shopId: s.shop.shop.id }));
    expect((await transactionsOf(s)).filter((t) => t.type === 'refund')).toHaveLength(1);
  });
});

describe('a refund that cannot be made when the late payment is recorded', () => {
  it('stays due and is made by billing’s next pass, once', async () => {
    const s = await subShop();
    const created = await s.api.post('/subscriptions', cardBody({ card: card(KOPEK_CARDS.timeout) }));
    expect(created.status, created.text).toBe(201);
    expect(
      (await s.api.post(`/subscriptions/${created.body.id}/cancel`, { cancel_reason: 'No' })).status,
    ).toBe(200);
    const down = vi
      .spyOn(InProcessGatewayClient.prototype, 'refund')
      .mockRejectedValue(new Error('the gateway does not answer'));
    try {
      await withClock(h, 10 * 60_000, () => billDue(h.app.services, { shopId: s.shop.shop.id }));
      expect(down).toHaveBeenCalled();
    } finally {
      down.mockRestore();
    }
    expect((await transactionsOf(s)).filter((t) => t.type === 'refund')).toEqual([]);
    const [due] = await h.db.query<{ reversal: string }>(
      'SELECT reversal FROM subscription_charges WHERE subscription_id = $1',
      [created.body.id],
    );
    expect(due?.reversal).toBe('due');
    await withClock(h, 11 * 60_000, () => billDue(h.app.services, { shopId: s.shop.shop.id }));
    await withClock(h, 12 * 60_000, () => billDue(h.app.services, { shopId: s.shop.shop.id }));
    const refunds = (await transactionsOf(s)).filter((t) => t.type === 'refund');
    expect(refunds).toEqual([expect.objectContaining({ status: 'successful', amount: 1999 })]);
    const [done] = await h.db.query<{ reversal: string; reversal_uid: string }>(
      'SELECT reversal, reversal_uid FROM subscription_charges WHERE subscription_id = $1',
      [created.body.id],
    );
    expect(done).toEqual({ reversal: 'refunded', reversal_uid: refunds[0]?.uid });
  });
});

describe('a cancel while the first charge is on its way to the gateway', () => {
  it('refunds the payment the cardholder completes afterwards through 3-D Secure', async () => {
    const s = await subShop({ threeDs: true });
    const proto = InProcessGatewayClient.prototype;
    const realPayment = proto.payment;
    let cancelled: { status: number } | undefined;
    const spies = [
      // Step by step, as over HTTP: the claim commits, then the payment leaves.
      vi.spyOn(proto, 'planPayment').mockResolvedValue(undefined),
      vi.spyOn(proto, 'payment').mockImplementation(async function (this: InProcessGatewayClient, ...a) {
        // The shop cancels while the payment is on its way.
        const [row] = await h.db.query<{ id: string }>(
          'SELECT id FROM subscriptions WHERE shop_id = $1 ORDER BY seq DESC LIMIT 1',
          [s.shop.shop.id],
        );
        cancelled = await s.api.post(`/subscriptions/${row?.id}/cancel`, { cancel_reason: 'No' });
        return realPayment.apply(this, a);
      }),
    ];
    let created: Awaited<ReturnType<typeof s.api.post>>;
    try {
      created = await s.api.post('/subscriptions', cardBody({ card: card(CHALLENGE) }));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(cancelled?.status).toBe(200);
    expect(created.status, created.text).toBe(201);
    const uid = created.body.last_transaction.uid as string;
    expect(created.body).toMatchObject({ state: 'canceled', last_transaction: { status: 'incomplete' } });

    // The payment's step was never ended (the cancel came before it existed): the cardholder passes it.
    const passed = await s.api.post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(passed.body.transaction).toMatchObject({ uid, status: 'successful' });
    const refunds = (await transactionsOf(s)).filter((t) => t.type === 'refund');
    expect(refunds).toEqual([
      expect.objectContaining({ status: 'successful', amount: 1999, parent_uid: uid }),
    ]);
    const read = await s.api.get(`/subscriptions/${created.body.id}`);
    expect(read.body).toMatchObject({ state: 'canceled', paid_billing_cycles: 0 });
  });
});
