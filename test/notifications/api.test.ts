import { afterAll, describe, expect, it } from 'vitest';
import { client } from '../harness.js';
import { notifyShop, type Receiver, startReceiver } from './receiver.js';

/** GET /notifications, GET /notifications/{id} and POST /notifications/{id}/resend. */

let rx: Receiver;
afterAll(() => rx?.close());

async function shopWithNotifications() {
  rx ??= await startReceiver();
  const s = await notifyShop();
  const a = await s.subscribe(rx.url);
  const b = await s.subscribe(rx.url);
  // Without a notification_url nothing is sent, and nothing is listed.
  await s.api.post('/subscriptions', {
    plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    card: {
      number: '4200000000000000',
      verification_value: '123',
      holder: 'JANE DOE',
      exp_month: '12',
      exp_year: '2030',
    },
  });
  return { s, a, b };
}

describe('GET /notifications', () => {
  it('lists notifications newest first, filters them and pages through them', async () => {
    const { s, a, b } = await shopWithNotifications();
    const all = await s.api.get('/notifications');
    expect(all.status).toBe(200);
    expect(all.body.map((n: { resource_id: string; event: string }) => [n.resource_id, n.event])).toEqual([
      [b, 'activated.subscription'],
      [b, 'created.subscription'],
      [a, 'activated.subscription'],
      [a, 'created.subscription'],
    ]);
    expect(all.body[0]).toMatchObject({
      id: expect.stringMatching(/^evt_\d+$/),
      resource_type: 'subscription',
      url: rx.url,
      status: 'pending',
      attempt_count: 0,
      delivered_at: null,
      payload: { id: b, event: 'activated.subscription', state: 'active' },
    });
    expect(all.body[0].attempts).toBeUndefined();

    expect((await s.api.get(`/notifications?resource_id=${a}`)).body).toHaveLength(2);
    const created = await s.api.get('/notifications?event=created.subscription');
    expect(created.body.map((n: { resource_id: string }) => n.resource_id)).toEqual([b, a]);
    await s.deliver();
    expect((await s.api.get('/notifications?status=pending')).body).toEqual([]);
    expect((await s.api.get('/notifications?status=delivered')).body).toHaveLength(4);

    const first = await s.api.get('/notifications?limit=3&status=delivered');
    expect(first.body).toHaveLength(3);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1] as string;
    expect(next).toContain('status=delivered');
    expect(next).toContain(`starting_after=${first.body[2].id}`);
    const second = await s.api.get(next.replace('http://kopek.test', ''));
    expect(second.body.map((n: { id: string }) => n.id)).toEqual([all.body[3].id]);
    expect(second.headers.link).toBeUndefined();
  });

  it('refuses a bad status, limit or cursor', async () => {
    const { s } = await shopWithNotifications();
    const bad = await s.api.get('/notifications?status=lost');
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ status: ['is not included in the list'] });
    expect((await s.api.get('/notifications?limit=0')).status).toBe(422);
    expect((await s.api.get('/notifications?starting_after=evt_999999999')).body.errors).toEqual({
      starting_after: ['does not name an object of this list'],
    });
    expect((await s.api.get('/notifications?starting_after=sbs_x')).status).toBe(422);
  });
});

describe('GET /notifications/{id} and resend', () => {
  it('are in the OpenAPI document', async () => {
    const { h } = await notifyShop();
    const doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/docs/json' })).body);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/notifications', '/notifications/{id}', '/notifications/{id}/resend']),
    );
  });

  it('answers 404 for unknown, malformed and other shops’ ids, and 401 without credentials', async () => {
    const { s } = await shopWithNotifications();
    const other = await notifyShop();
    const [mine] = (await s.api.get('/notifications')).body;
    for (const id of [mine.id, 'evt_999999999', 'evt_0', 'evt_x', '12', `${mine.id}0000000000000000`]) {
      expect((await other.api.get(`/notifications/${id}`)).status, id).toBe(404);
      expect((await other.api.post(`/notifications/${id}/resend`)).status, id).toBe(404);
    }
    expect((await other.api.get('/notifications')).body).toEqual([]);
    const anonymous = client(s.h, undefined);
    expect((await anonymous.get('/notifications')).status).toBe(401);
    expect((await anonymous.get(`/notifications/${mine.id}`)).status).toBe(401);
    expect((await anonymous.post(`/notifications/${mine.id}/resend`)).status).toBe(401);
    // The notification did not move.
    expect((await s.api.get(`/notifications/${mine.id}`)).body).toMatchObject({
      status: 'pending',
      attempt_count: 0,
    });
  });

  it('resends a delivered notification as a new attempt, with the same event id', async () => {
    const { s, a } = await shopWithNotifications();
    await s.deliver();
    const [created] = (await s.api.get(`/notifications?resource_id=${a}&event=created.subscription`)).body;
    const before = rx.received.length;
    const key = { 'idempotency-key': `resend-${created.id}` };
    const resent = await s.api.post(`/notifications/${created.id}/resend`, undefined, key);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({ id: created.id, status: 'pending', attempt_count: 1 });
    expect(resent.body.attempts).toHaveLength(1);
    expect(resent.body.next_attempt_at).toEqual(expect.any(String));
    // As `curl -X POST` sends it: no body, no Content-Type.
    const bare = await s.h.app.inject({
      method: 'POST',
      url: `/notifications/${created.id}/resend`,
      headers: { authorization: s.shop.auth },
    });
    expect(bare.statusCode, bare.body).toBe(200);
    // A retry of the same request replays its answer and queues nothing more.
    const again = await s.api.post(`/notifications/${created.id}/resend`, undefined, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await s.deliver()).toMatchObject({ attempts: 1, delivered: 1 });
    expect(rx.received.length).toBe(before + 1);
    expect(rx.received.at(-1)?.headers['kopek-event-id']).toBe(created.id);
    expect((await s.api.get(`/notifications/${created.id}`)).body).toMatchObject({
      status: 'delivered',
      attempt_count: 2,
    });
  });

  it('leaves a notification on its way alone', async () => {
    const slow = await startReceiver(() => ({ status: 200, hang: true }));
    try {
      const s = await notifyShop();
      const sub = await s.subscribe(slow.url);
      const [created] = (await s.api.get(`/notifications?resource_id=${sub}&event=created.subscription`))
        .body;
      const running = s.deliver({ timeoutMs: 1500 });
      while (slow.received.length === 0) await new Promise((r) => setTimeout(r, 20));
      const during = await s.api.post(`/notifications/${created.id}/resend`);
      expect(during.status).toBe(200);
      expect(during.body).toMatchObject({ status: 'pending', attempt_count: 1, attempts: [] });
      await running;
      const after = (await s.api.get(`/notifications/${created.id}`)).body;
      expect(after).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(after.attempts[0].error).toBe('timed out after 1.5 s');
      expect(slow.received).toHaveLength(1);
    } finally {
      await slow.close();
    }
  });
});
