import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import { changeAnnounced, transactionAnnouncement } from '../../src/gateway/announce.js';
import { toAnswer } from '../../src/gateway/answer.js';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS, LATE_ANSWER_MS } from '../../src/gateway/test-cards.js';
import { completeThreeDSecure } from '../../src/gateway/three-ds.js';
import {
  findTransaction,
  insertTransaction,
  type NewTransaction,
  storedTransactionRow,
} from '../../src/ledger/repository.js';
import type { ResourceType } from '../../src/notifications/outbox.js';
import { client, harness, newShop, withClock } from '../harness.js';
import { card, type GatewayShop, gatewayShop, order } from './helpers.js';

/**
 * Transaction events: every final (or 3-D Secure incomplete) status a gateway transaction reaches
 * writes one outbox row with the API's own answer, atomically with the change; pending writes none.
 */

beforeAll(() => harness());

const HOOK = 'https://shop.example/hooks/kopek';

interface EventRow {
  shop_id: number;
  resource_type: string;
  resource_id: string;
  event: string;
  payload: Record<string, unknown>;
  url: string | null;
  status: string;
  created_at: Date;
  next_attempt_at: Date | null;
}

async function eventsOf(g: GatewayShop, uid: string): Promise<EventRow[]> {
  return g.h.db.query<EventRow>(
    `SELECT e.shop_id, e.resource_type, e.resource_id, e.event, e.payload, e.url,
       coalesce(d.status, 'none') AS status, e.created_at, d.next_attempt_at
     FROM events e LEFT JOIN deliveries d ON d.event_id = e.id WHERE e.resource_id = $1 ORDER BY e.id`,
    [uid],
  );
}

/** The one event of `uid`, checked to be the API's current answer for it plus `event`. */
async function onlyEvent(g: GatewayShop, uid: string, event: string): Promise<EventRow> {
  const rows = await eventsOf(g, uid);
  expect(rows.map((r) => r.event)).toEqual([event]);
  const row = rows[0] as EventRow;
  const queried = await g.api.get(`/transactions/${uid}`);
  expect(row.payload).toEqual({ transaction: queried.body.transaction, event });
  expect(row).toMatchObject({ shop_id: g.shop.shop.id, resource_type: 'transaction', resource_id: uid });
  return row;
}

const ctxOf = (g: GatewayShop) => ({ ...g.h.app.services, shop: g.shop.shop });

describe('transaction events: charges', () => {
  it('announces a successful payment with the answer it gave, kept for the record without a URL', async () => {
    const g = await gatewayShop();
    const res = await g.pay();
    expect(res.status).toBe(200);
    const uid = res.body.transaction.uid;
    const row = await onlyEvent(g, uid, 'successful.transaction');
    expect(row.payload).toEqual({ ...res.body, event: 'successful.transaction' });
    // The transaction object is exactly the API's: `event` sits beside it, not in it.
    expect(row.payload.transaction).not.toHaveProperty('event');
    expect(row).toMatchObject({ url: null, status: 'none', next_attempt_at: null });
    expect(row.created_at).toEqual(g.h.clock.now());
  });

  it('waits to deliver it to the notification_url the request carried', async () => {
    const g = await gatewayShop();
    const res = await g.pay({ notification_url: HOOK });
    const row = await onlyEvent(g, res.body.transaction.uid, 'successful.transaction');
    expect(row.payload).toEqual({ ...res.body, event: 'successful.transaction' });
    expect(row).toMatchObject({ url: HOOK, status: 'pending' });
    expect(row.next_attempt_at).toEqual(row.created_at);
  });

  it('announces declined, erroneous and AVS/CVC-rejected payments as failed or error', async () => {
    const g = await gatewayShop();
    const declined = await g.pay({ credit_card: card('4005550000000019'), notification_url: HOOK });
    expect(declined.body.transaction.status).toBe('failed');
    const row = await onlyEvent(g, declined.body.transaction.uid, 'failed.transaction');
    expect(row).toMatchObject({ url: HOOK, status: 'pending' });

    const error = await g.pay({ credit_card: card(KOPEK_CARDS.error) });
    expect(error.body.transaction.status).toBe('error');
    await onlyEvent(g, error.body.transaction.uid, 'error.transaction');

    const rejected = await g.pay({
      credit_card: card('4200000000000000', { verification_value: '222' }),
      avs_cvc_verification: { cvc_verification: { rejection_codes: ['N'] } },
    });
    expect(rejected.body.transaction.status).toBe('failed');
    await onlyEvent(g, rejected.body.transaction.uid, 'failed.transaction');
  });

  it('announces authorizations and credits like payments', async () => {
    const g = await gatewayShop();
    const auth = await g.authorize({ notification_url: HOOK });
    const row = await onlyEvent(g, auth.body.transaction.uid, 'successful.transaction');
    expect(row.payload).toEqual({ ...auth.body, event: 'successful.transaction' });
    expect(row.url).toBe(HOOK);

    const credit = await g.send('/transactions/credits', {
      amount: 3000,
      currency: 'EUR',
      description: 'Payout',
      credit_card: { token: auth.body.transaction.credit_card.token },
    });
    expect(credit.body.transaction.type).toBe('credit');
    const creditEvent = await onlyEvent(g, credit.body.transaction.uid, 'successful.transaction');
    expect(creditEvent.payload).toEqual({ ...credit.body, event: 'successful.transaction' });
  });

  it('announces a charge refused as a duplicate as failed, and the held charge writes nothing else', async () => {
    const g = await gatewayShop();
    const first = await g.pay({ tracking_id: 'events-dup', notification_url: HOOK });
    const second = await g.pay({ tracking_id: 'events-dup', notification_url: HOOK });
    expect(second.body.transaction.status).toBe('failed');
    expect(second.body.transaction.message).toContain(first.body.transaction.uid);
    // The duplicate is recorded under the uid the held charge would have had: one event, failed.
    const row = await onlyEvent(g, second.body.transaction.uid, 'failed.transaction');
    expect(row.payload).toEqual({ ...second.body, event: 'failed.transaction' });
    expect(row).toMatchObject({ url: HOOK, status: 'pending' });
    await onlyEvent(g, first.body.transaction.uid, 'successful.transaction');
  });

  it('announces none of the identical charges sent at once twice: one successful, the rest failed', async () => {
    const g = await gatewayShop();
    const answers = await Promise.all(Array.from({ length: 4 }, () => g.pay({ tracking_id: 'events-race' })));
    const events = [];
    for (const a of answers) {
      const rows = await eventsOf(g, a.body.transaction.uid);
      expect(rows).toHaveLength(1);
      events.push(rows[0]?.event);
    }
    expect(events.sort()).toEqual([
      'failed.transaction',
      'failed.transaction',
      'failed.transaction',
      'successful.transaction',
    ]);
  });

  it('announces nothing for a request refused before a transaction exists', async () => {
    const g = await gatewayShop();
    const trackingId = `refused-${randomUUID()}`;
    const res = await g.pay({ tracking_id: trackingId, amount: -1, notification_url: HOOK });
    expect(res.status).toBe(422);
    const [n] = await g.h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE shop_id = $1`,
      [g.shop.shop.id],
    );
    expect(n?.n).toBe(0);
  });
});

describe('transaction events: pending and the late answer', () => {
  it('announces nothing while pending, then the late answer once, whoever looks first', async () => {
    const g = await gatewayShop();
    const res = await g.pay({ credit_card: card(KOPEK_CARDS.timeout), notification_url: HOOK });
    expect(res.status).toBe(504);
    const uid = res.body.response.uid as string;
    expect(await eventsOf(g, uid)).toEqual([]);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('pending');
    expect(await eventsOf(g, uid)).toEqual([]);

    await withClock(g.h, LATE_ANSWER_MS, async () => {
      const settled = await g.api.get(`/transactions/${uid}`);
      expect(settled.body.transaction.status).toBe('successful');
      const row = await onlyEvent(g, uid, 'successful.transaction');
      expect(row.payload).toEqual({ ...settled.body, event: 'successful.transaction' });
      expect(row).toMatchObject({ url: HOOK, status: 'pending' });
      expect(row.created_at).toEqual(g.h.clock.now());
      // Looking again changes nothing and announces nothing.
      await g.api.get(`/transactions/${uid}`);
      await g.api.get(
        `/v2/transactions/tracking_id/${encodeURIComponent(settled.body.transaction.tracking_id)}`,
      );
      expect(await eventsOf(g, uid)).toHaveLength(1);
    });
  });

  it('announces the late answer when a refund is what settles the parent, then the refund', async () => {
    const g = await gatewayShop();
    const res = await g.pay({ credit_card: card(KOPEK_CARDS.timeout) });
    const uid = res.body.response.uid as string;
    const refund = await withClock(g.h, LATE_ANSWER_MS, () =>
      g.send('/transactions/refunds', { parent_uid: uid, amount: 100, reason: 'Customer request' }),
    );
    expect(refund.body.transaction.status).toBe('successful');
    await onlyEvent(g, uid, 'successful.transaction');
    await onlyEvent(g, refund.body.transaction.uid, 'successful.transaction');
  });
});

describe('transaction events: 3-D Secure', () => {
  async function incomplete(number: string, extra: Record<string, unknown> = {}) {
    const g = await gatewayShop({ threeDs: true });
    const res = await g.pay({ credit_card: card(number), return_url: 'https://shop.example/done', ...extra });
    expect(res.body.transaction.status).toBe('incomplete');
    return { g, res, uid: res.body.transaction.uid as string };
  }

  it('announces incomplete with its redirect_url, then the outcome of the step, one event each', async () => {
    const { g, res, uid } = await incomplete('4012000000001097', { notification_url: HOOK });
    const first = await onlyEvent(g, uid, 'incomplete.transaction');
    expect(first.payload).toEqual({ ...res.body, event: 'incomplete.transaction' });
    expect(first.payload.transaction).toMatchObject({
      redirect_url: `${g.h.config.gatewayUrl}/process/${uid}`,
    });

    const done = await withClock(g.h, 5_000, () => completeThreeDSecure(g.h, uid, 'passed'));
    expect(done.transaction.status).toBe('successful');
    const rows = await eventsOf(g, uid);
    expect(rows.map((r) => r.event)).toEqual(['incomplete.transaction', 'successful.transaction']);
    const queried = await g.api.get(`/transactions/${uid}`);
    expect(rows[1]?.payload).toEqual({
      transaction: queried.body.transaction,
      event: 'successful.transaction',
    });
    expect(rows[1]?.payload).toEqual({ transaction: done.transaction, event: 'successful.transaction' });
    expect(rows[1]).toMatchObject({ url: HOOK, status: 'pending' });
    expect(rows[1]?.created_at.getTime()).toBe((rows[0]?.created_at.getTime() as number) + 5_000);
  });

  it('announces a failed challenge as failed; finishing it again announces nothing more', async () => {
    const { g, uid } = await incomplete('4012000000001097');
    await completeThreeDSecure(g.h, uid, 'failed');
    await expect(completeThreeDSecure(g.h, uid, 'passed')).rejects.toMatchObject({ code: 'conflict' });
    const again = await g.api.post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(again.body.transaction.status).toBe('failed');
    const rows = await eventsOf(g, uid);
    expect(rows.map((r) => r.event)).toEqual(['incomplete.transaction', 'failed.transaction']);
    expect(rows[1]).toMatchObject({ url: null, status: 'none' });
    expect(rows[1]?.payload).toEqual({ ...again.body, event: 'failed.transaction' });
  });

  it("announces the step finished through the shop's /process/{uid}/return", async () => {
    const { g, uid } = await incomplete('4012000000001006');
    const res = await g.api.post(`/process/${uid}/return`, { pa_res: 'anything' });
    expect(res.body.transaction.status).toBe('successful');
    const rows = await eventsOf(g, uid);
    expect(rows.map((r) => r.event)).toEqual(['incomplete.transaction', 'successful.transaction']);
    expect(rows[1]?.payload).toEqual({ ...res.body, event: 'successful.transaction' });
  });

  it('another shop cannot finish the step: 404, and nothing is announced', async () => {
    const { g, uid } = await incomplete('4012000000001006');
    const other = client(g.h, await newShop(g.h));
    const res = await other.post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(res.status).toBe(404);
    expect((await eventsOf(g, uid)).map((r) => r.event)).toEqual(['incomplete.transaction']);
  });

  it('a status change rolled back takes its event with it', async () => {
    const { g, uid } = await incomplete('4012000000001006');
    const now = g.h.clock.now();
    const attempt = g.h.db.tx(async (tx) => {
      await changeAnnounced(tx, uid, { status: 'failed', message: 'never' }, now, g.h.config.gatewayUrl);
      expect((await tx.query('SELECT 1 FROM events WHERE resource_id = $1', [uid])).length).toBe(2);
      throw new Error('the rest of the change failed');
    });
    await expect(attempt).rejects.toThrow('the rest of the change failed');
    expect((await findTransaction(g.h.db, g.shop.shop.id, uid))?.status).toBe('incomplete');
    expect((await eventsOf(g, uid)).map((r) => r.event)).toEqual(['incomplete.transaction']);
  });
});

describe('transaction events: captures, voids and refunds', () => {
  const child = (g: GatewayShop, kind: string, request: Record<string, unknown>) =>
    g.send(`/transactions/${kind}`, request);

  it("announces each child to its parent's notification_url", async () => {
    const g = await gatewayShop();
    const auth = (await g.authorize({ notification_url: HOOK })).body.transaction.uid;
    const capture = await child(g, 'captures', { parent_uid: auth, amount: 1999 });
    const row = await onlyEvent(g, capture.body.transaction.uid, 'successful.transaction');
    expect(row.payload).toEqual({ ...capture.body, event: 'successful.transaction' });
    expect(row).toMatchObject({ url: HOOK, status: 'pending' });

    const refund = await child(g, 'refunds', {
      parent_uid: capture.body.transaction.uid,
      amount: 500,
      reason: 'r',
    });
    const refundEvent = await onlyEvent(g, refund.body.transaction.uid, 'successful.transaction');
    expect(refundEvent.payload).toEqual({ ...refund.body, event: 'successful.transaction' });
    expect(refundEvent.url).toBe(HOOK);

    const other = (await g.authorize()).body.transaction.uid;
    const voided = await child(g, 'voids', { parent_uid: other });
    const voidEvent = await onlyEvent(g, voided.body.transaction.uid, 'successful.transaction');
    expect(voidEvent.payload).toEqual({ ...voided.body, event: 'successful.transaction' });
    expect(voidEvent).toMatchObject({ url: null, status: 'none' });
  });

  it('announces a refund refused as a duplicate as failed', async () => {
    const g = await gatewayShop();
    const paid = (await g.pay({ notification_url: HOOK })).body.transaction.uid;
    await child(g, 'refunds', { parent_uid: paid, amount: 100, reason: 'r' });
    const dup = await child(g, 'refunds', { parent_uid: paid, amount: 100, reason: 'r' });
    expect(dup.body.transaction.status).toBe('failed');
    const row = await onlyEvent(g, dup.body.transaction.uid, 'failed.transaction');
    expect(row.payload).toEqual({ ...dup.body, event: 'failed.transaction' });
    expect(row.url).toBe(HOOK);
  });

  it("refused children and another shop's parent write no transaction and no event", async () => {
    const g = await gatewayShop();
    const paid = (await g.pay()).body.transaction.uid;
    const before = await g.h.db.query('SELECT id FROM events WHERE shop_id = $1', [g.shop.shop.id]);
    expect((await child(g, 'captures', { parent_uid: paid, amount: 1 })).status).toBe(422);
    expect((await child(g, 'refunds', { parent_uid: paid, amount: 5000, reason: 'r' })).status).toBe(422);

    const other = await gatewayShop();
    const foreign = await child(other, 'refunds', { parent_uid: paid, amount: 100, reason: 'r' });
    expect(foreign.status).toBe(404);
    expect(await g.h.db.query('SELECT id FROM events WHERE shop_id = $1', [g.shop.shop.id])).toEqual(before);
    expect(await g.h.db.query('SELECT id FROM events WHERE shop_id = $1', [other.shop.shop.id])).toEqual([]);
  });
});

describe('transaction events: written with the transaction or not at all', () => {
  it("a planned payment's statements write its event, in the caller's batch", async () => {
    const g = await gatewayShop();
    const planned = await new InProcessGatewayClient(ctxOf(g)).planPayment(
      order({ duplicate_check: false, notification_url: HOOK }),
    );
    if (!planned) throw new Error('expected a planned payment');
    expect(await eventsOf(g, planned.answer.uid)).toEqual([]);
    await g.h.db.batch(planned.statements);
    const row = await onlyEvent(g, planned.answer.uid, 'successful.transaction');
    expect(row.payload).toEqual({ transaction: planned.answer, event: 'successful.transaction' });
    expect(row).toMatchObject({ url: HOOK, status: 'pending' });
  });

  it('a batch that fails after the payment leaves neither the payment nor its event', async () => {
    const g = await gatewayShop();
    const planned = await new InProcessGatewayClient(ctxOf(g)).planPayment(order({ duplicate_check: false }));
    if (!planned) throw new Error('expected a planned payment');
    await expect(g.h.db.batch([...planned.statements, { sql: 'SELECT 1 / 0' }])).rejects.toThrow();
    expect(await findTransaction(g.h.db, g.shop.shop.id, planned.answer.uid)).toBeUndefined();
    expect(await eventsOf(g, planned.answer.uid)).toEqual([]);
  });

  it('an event that cannot be written leaves no transaction either', async () => {
    const g = await gatewayShop();
    const now = g.h.clock.now();
    const t: NewTransaction = {
      uid: randomUUID(),
      shop_id: g.shop.shop.id,
      type: 'payment',
      status: 'successful',
      amount: 100,
      currency: 'EUR',
      test: true,
    };
    const row = storedTransactionRow(t, now);
    const announcement = transactionAnnouncement(row, toAnswer(row, g.h.config.gatewayUrl));
    if (!announcement) throw new Error('expected an announcement');
    // The outbox refuses an unknown resource type (a CHECK constraint).
    const broken = { ...announcement, resourceType: 'nonsense' as ResourceType };
    await expect(insertTransaction(g.h.db, t, now, broken)).rejects.toThrow();
    expect(await findTransaction(g.h.db, g.shop.shop.id, t.uid)).toBeUndefined();
    expect(await eventsOf(g, t.uid)).toEqual([]);
  });
});

describe("transaction events: a subscription's charges", () => {
  it('announces the first charge and a renewal like any payment, beside the subscription events', async () => {
    const g = await gatewayShop();
    const before = g.h.clock.now();
    try {
      const created = await g.api.post('/subscriptions', {
        plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
        card: card(),
      });
      expect(created.status, created.text).toBe(201);
      const first = created.body.last_transaction.uid as string;
      const row = await onlyEvent(g, first, 'successful.transaction');
      expect(row).toMatchObject({ url: null, status: 'none' });

      g.h.clock.set(created.body.renew_at);
      await billDue(g.h.app.services, { shopId: g.shop.shop.id });
      const renewed = (await g.api.get(`/subscriptions/${created.body.id}`)).body;
      const second = renewed.last_transaction.uid as string;
      expect(second).not.toBe(first);
      await onlyEvent(g, second, 'successful.transaction');
    } finally {
      g.h.clock.set(before);
    }
  });
});
