import { describe, expect, it } from 'vitest';
import { KOPEK_CARDS, LATE_ANSWER_MS } from '../../src/gateway/test-cards.js';
import { addMonthsIso, atTime, card, cardBody, countRows, paymentsOf, subShop } from './helpers.js';

const key = (name: string) => ({ 'idempotency-key': `${name}-${Math.random().toString(36).slice(2)}` });

describe('subscriptions: Idempotency-Key', () => {
  it('a retry with the same key and body returns the same subscription and charges once', async () => {
    const s = await subShop();
    const headers = key('retry');
    const body = cardBody({ tracking_id: 'idem-1' });
    const first = await s.api.post('/subscriptions', body, headers);
    const again = await s.api.post('/subscriptions', body, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
    expect(await countRows(s.h, 'subscriptions', s.shop)).toBe(1);
  });

  it('answers a key whose work finished before its answer was stored with that subscription, charging nothing more', async () => {
    const s = await subShop();
    const headers = key('finished');
    const body = cardBody({ tracking_id: 'idem-finished' });
    const first = await s.api.post('/subscriptions', body, headers);
    expect(first.status).toBe(201);
    // As a process killed after its last commit and before storing the answer leaves the key.
    const [row] = await s.h.db.query<{ recovery_point: string; resource: unknown }>(
      `UPDATE idempotency_keys SET status_code = NULL, response_headers = NULL, response_body = NULL
       WHERE shop_id = $1 RETURNING recovery_point, resource`,
      [s.shop.shop.id],
    );
    expect(row).toEqual({ recovery_point: 'finished', resource: { subscription: first.body.id } });
    const retry = await s.api.post('/subscriptions', body, headers);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    const replay = await s.api.post('/subscriptions', body, headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
    expect(await countRows(s.h, 'subscriptions', s.shop)).toBe(1);
  });

  it('refuses the same key with another body', async () => {
    const s = await subShop();
    const headers = key('other-body');
    await s.api.post('/subscriptions', cardBody(), headers);
    const res = await s.api.post('/subscriptions', cardBody({ tracking_id: 'changed' }), headers);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Idempotency key was already used with a different request; use a new key for a new request',
      errors: {
        idempotency_key: ['was already used with a different request; use a new key for a new request'],
      },
    });
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
  });

  it('concurrent retries with one key create one subscription and charge once', async () => {
    const s = await subShop();
    const headers = key('concurrent');
    const body = cardBody();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => s.api.post('/subscriptions', body, headers)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((st) => st === 201 || st === 409)).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    for (const busy of answers.filter((a) => a.status === 409)) {
      expect(busy.body).toEqual({
        message: 'A request with this Idempotency-Key is still being processed; retry later',
        errors: { base: ['A request with this Idempotency-Key is still being processed; retry later'] },
      });
    }
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
    expect(await countRows(s.h, 'subscriptions', s.shop)).toBe(1);
    const later = await s.api.post('/subscriptions', body, headers);
    expect(later.body.id).toBe(created[0]?.body.id);
    expect(await paymentsOf(s.h, s.shop)).toHaveLength(1);
  });

  it('a rejected request keeps its answer for the key, and writes nothing', async () => {
    const s = await subShop();
    const headers = key('rejected');
    const body = cardBody({ card: card('4200000000000001') });
    const first = await s.api.post('/subscriptions', body, headers);
    const again = await s.api.post('/subscriptions', body, headers);
    expect(first.status).toBe(422);
    expect(again.body).toEqual(first.body);
    expect(await countRows(s.h, 'subscriptions', s.shop)).toBe(0);
  });
});

describe('subscriptions: a charge whose outcome is unknown (timeout card)', () => {
  it('stays processing, is never charged again, and is resolved by a query after the late answer', async () => {
    const s = await subShop();
    // Mid-month, whatever an earlier file of this worker left the shared clock at: the expected
    // renewal (addMonthsIso) does not clamp to a month's end as Kopek's calendar does.
    await atTime(s.h, '2026-01-15T10:00:00.000Z', async () => {
      const headers = key('timeout');
      const body = cardBody({ card: card(KOPEK_CARDS.timeout) });
      const created = await s.api.post('/subscriptions', body, headers);
      expect(created.status).toBe(201);
      const [payment] = await paymentsOf(s.h, s.shop);
      expect(payment).toMatchObject({ status: 'pending', tracking_id: `${created.body.id}-1` });
      const start = s.h.clock.now();
      expect(created.body).toMatchObject({
        state: 'processing',
        renew_at: null,
        active_to: null,
        paid_billing_cycles: 0,
        number_failed_payment_attempts: 0,
        last_transaction: {
          uid: payment?.uid,
          status: 'pending',
          message: null,
          created_at: start.toISOString(),
        },
      });

      // Before the acquirer answers: a read, a retry and a list change nothing and charge nothing.
      expect((await s.api.get(`/subscriptions/${created.body.id}`)).body).toEqual(created.body);
      expect((await s.api.post('/subscriptions', body, headers)).body).toEqual(created.body);
      expect(
        (await s.api.get('/subscriptions?state=processing')).body.map((x: { id: string }) => x.id),
      ).toEqual([created.body.id]);

      s.h.clock.advance(LATE_ANSWER_MS);
      try {
        const settled = await s.api.get(`/subscriptions/${created.body.id}`);
        expect(settled.body).toMatchObject({
          state: 'active',
          paid_billing_cycles: 1,
          renew_at: addMonthsIso(start.toISOString(), 1),
          active_to: addMonthsIso(start.toISOString(), 1),
          last_transaction: { uid: payment?.uid, status: 'successful', message: 'Successfully processed' },
        });
        expect(await paymentsOf(s.h, s.shop)).toMatchObject([{ uid: payment?.uid, status: 'successful' }]);
        // Concurrent readers settle it once.
        const reads = await Promise.all([1, 2, 3].map(() => s.api.get(`/subscriptions/${created.body.id}`)));
        for (const r of reads) expect(r.body).toEqual(settled.body);
      } finally {
        s.h.clock.advance(-LATE_ANSWER_MS);
      }
    });
  });

  it('a paid trial with an unknown outcome stays trial_processing until it is known', async () => {
    const s = await subShop();
    const plan = {
      title: 'T',
      currency: 'EUR',
      plan: { amount: 900, interval: 1, interval_unit: 'month' },
      trial: { amount: 90, interval: 3, interval_unit: 'day' },
    };
    const created = await s.api.post('/subscriptions', cardBody({ plan, card: card(KOPEK_CARDS.timeout) }));
    expect(created.body).toMatchObject({
      state: 'trial_processing',
      last_transaction: { status: 'pending' },
    });
    s.h.clock.advance(LATE_ANSWER_MS);
    try {
      const settled = await s.api.get(`/subscriptions/${created.body.id}`);
      expect(settled.body).toMatchObject({
        state: 'trial',
        paid_billing_cycles: 0,
        renew_at: new Date(Date.parse(created.body.created_at) + 3 * 24 * 3600_000).toISOString(),
      });
    } finally {
      s.h.clock.advance(-LATE_ANSWER_MS);
    }
    expect(await paymentsOf(s.h, s.shop)).toMatchObject([{ amount: 90, status: 'successful' }]);
  });
});
