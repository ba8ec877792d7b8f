import { afterAll, describe, expect, it } from 'vitest';
import { type NotifyShop, notifyShop, type Receiver, signatureValid, startReceiver } from './receiver.js';

/**
 * Delivery to a real HTTP receiver, driven in-process as the loop of `kopek serve` drives it: signed,
 * with the shop's credentials, retried until the receiver recovers, once, and in order.
 */

const receivers: Receiver[] = [];
async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}
afterAll(async () => {
  for (const r of receivers) await r.close();
});

const advance = async (s: NotifyShop, by: string) => {
  const res = await s.api.post('/test_clock/advance', { by });
  expect(res.status, res.text).toBe(200);
};

const notificationsOf = async (s: NotifyShop, resourceId: string) => {
  const res = await s.api.get(`/notifications?resource_id=${resourceId}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; event: string; status: string }[];
};

describe('notification delivery', () => {
  it('a receiver that fails three times then recovers gets the notification exactly once, signed, every attempt recorded', async () => {
    const rx = await receiver((i) =>
      i < 3 ? { status: 500, body: 'down for maintenance' } : { status: 200, body: 'thanks' },
    );
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);

    expect(await s.deliver()).toEqual({ attempts: 1, delivered: 0, retrying: 1, failed: 0 });
    // The first retries come within a minute: a brief outage heals fast.
    await advance(s, 'PT13S');
    expect((await s.deliver()).attempts).toBe(1);
    await advance(s, 'PT37S');
    expect((await s.deliver()).attempts).toBe(1);
    // While `created` waits for its retries, the subscription's later event waits behind it.
    expect(rx.received.map((r) => r.json.event)).toEqual(Array(3).fill('created.subscription'));
    await advance(s, 'PT73S');
    // Recovered: `created` goes, and `activated`, now next in line, follows in the same run.
    expect(await s.deliver()).toEqual({ attempts: 2, delivered: 2, retrying: 0, failed: 0 });
    expect(await s.deliver()).toEqual({ attempts: 0, delivered: 0, retrying: 0, failed: 0 });

    expect(rx.received.map((r) => r.json.event)).toEqual([
      ...Array(4).fill('created.subscription'),
      'activated.subscription',
    ]);
    const publicKey = (await s.api.get('/shop')).body.public_key as string;
    for (const r of rx.received) {
      expect(signatureValid(r, publicKey)).toBe(true);
      // Plain http://: the shop's credentials never travel where anyone on the path reads them.
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['kopek-event-id']).toMatch(/^evt_\d+$/);
      expect(r.headers['kopek-timestamp']).toMatch(/^\d{10}$/);
      expect(r.json.id).toBe(sub);
      expect(r.url).toBe('/hook');
    }
    // Every attempt carries the same event, byte for byte: the receiver de-duplicates by its id.
    const created = rx.received.slice(0, 4);
    expect(new Set(created.map((r) => r.body)).size).toBe(1);
    expect(new Set(created.map((r) => r.headers['kopek-event-id'])).size).toBe(1);
    // The body is the subscription as the API answers it, plus the event.
    const read = await s.api.get(`/subscriptions/${sub}`);
    expect({ ...(created[0]?.json ?? {}), event: undefined }).toEqual({ ...read.body, event: undefined });

    const [activated, first] = await notificationsOf(s, sub);
    expect(first?.id).toBe(created[0]?.headers['kopek-event-id']);
    expect(activated?.status).toBe('delivered');
    const one = await s.api.get(`/notifications/${first?.id}`);
    expect(one.body).toMatchObject({
      status: 'delivered',
      attempt_count: 4,
      next_attempt_at: null,
      url: rx.url,
      event: 'created.subscription',
      resource_type: 'subscription',
      resource_id: sub,
    });
    expect(one.body.delivered_at).toEqual(one.body.attempts[3].at);
    const attempts = one.body.attempts as { n: number; at: string; status_code: number; response: string }[];
    expect(attempts.map((a) => [a.n, a.status_code, a.response])).toEqual([
      [1, 500, 'down for maintenance'],
      [2, 500, 'down for maintenance'],
      [3, 500, 'down for maintenance'],
      [4, 200, 'thanks'],
    ]);
    const at = attempts.map((a) => Date.parse(a.at));
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeLessThanOrEqual(60_000);
    expect([...at].sort()).toEqual(at);
  });

  it("one subscription's failing notifications never hold up another's", async () => {
    const s = await notifyShop();
    let blocked = '';
    const rx = await receiver((_i, r) => (r.json.id === blocked ? { status: 503 } : { status: 204 }));
    blocked = await s.subscribe(rx.url);
    const other = await s.subscribe(rx.url);
    expect(await s.deliver()).toMatchObject({ delivered: 2, retrying: 1 });
    expect(rx.received.map((r) => [r.json.id, r.json.event])).toEqual(
      expect.arrayContaining([
        [blocked, 'created.subscription'],
        [other, 'created.subscription'],
        [other, 'activated.subscription'],
      ]),
    );
    expect(rx.received).toHaveLength(3);
  });

  it('delivers a renewal after the events before it, in order', async () => {
    const rx = await receiver();
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    await advance(s, 'P1M');
    await s.deliver();
    expect(rx.received.map((r) => r.json.event)).toEqual([
      'created.subscription',
      'activated.subscription',
      'renewed.subscription',
    ]);
    expect(rx.received.map((r) => r.json.paid_billing_cycles)).toEqual([1, 1, 2]);
    const ids = rx.received.map((r) => Number(String(r.headers['kopek-event-id']).slice(4)));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect((await notificationsOf(s, sub)).map((n) => n.status)).toEqual([
      'delivered',
      'delivered',
      'delivered',
    ]);
  });

  it('records a timeout, keeps only the first KiB of an answer, and follows no redirect', async () => {
    const elsewhere = await receiver();
    let mode: 'hang' | 'long' | 'redirect' = 'hang';
    const rx = await receiver(() => {
      if (mode === 'hang') return { status: 200, hang: true };
      if (mode === 'redirect') return { status: 307, headers: { location: elsewhere.url } };
      return { status: 500, body: `é${'x'.repeat(4000)}` };
    });
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    await s.deliver({ timeoutMs: 300 });
    mode = 'long';
    await advance(s, 'PT13S');
    await s.deliver();
    mode = 'redirect';
    await advance(s, 'PT37S');
    await s.deliver();
    const [, created] = await notificationsOf(s, sub);
    const one = (await s.api.get(`/notifications/${created?.id}`)).body;
    expect(one.status).toBe('pending');
    const [timedOut, long, redirected] = one.attempts;
    expect(timedOut).toMatchObject({
      n: 1,
      status_code: null,
      response: null,
      error: 'timed out after 0.3 s',
    });
    expect(long).toMatchObject({ n: 2, status_code: 500, error: null });
    expect(Buffer.byteLength(long.response)).toBe(1024);
    expect(long.response.startsWith('éxxx')).toBe(true);
    expect(redirected).toMatchObject({ n: 3, status_code: 307 });
    expect(elsewhere.received).toEqual([]);
  });
});
