import { verify } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { notificationBody } from '../../src/notifications/attempt.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import { client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';
import { cabinetClient, signedIn } from './session.js';

/** The cabinet's notifications: list, filters, paging, one notification, re-send. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

let ipSeq = 1;
const ip = () => `10.31.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

// Nothing listens on the discard port: every delivery is refused at once.
const DEAD = 'http://127.0.0.1:9/hook';

async function shopWithFailures(): Promise<{ shop: TestShop; subs: string[] }> {
  const shop = await newShop(h);
  const api = client(h, shop);
  const subs: string[] = [];
  for (const tracking of ['first', '<script>alert(1)</script>']) {
    const res = await api.post('/subscriptions', cardBody({ notification_url: DEAD, tracking_id: tracking }));
    expect(res.status, res.text).toBe(201);
    subs.push(res.body.id);
  }
  await deliverDue(h.app.services, { shopId: shop.shop.id });
  return { shop, subs };
}

const eventsOf = (shopId: number) =>
  h.db.query<{
    id: number;
    status: string;
    attempts: number;
    series_from: number;
    next_attempt_at: Date | null;
  }>(
    `SELECT event_id::int AS id, status, attempts, series_from, next_attempt_at FROM deliveries
     WHERE shop_id = $1 ORDER BY event_id`,
    [shopId],
  );

const ids = (html: string) =>
  [...html.matchAll(/href="\/cabinet\/notifications\/(evt_\d+)"/g)].map((m) => m[1]);

describe('cabinet notifications', () => {
  it('lists the shop’s notifications with their status and attempts, filtered', async () => {
    const { shop, subs } = await shopWithFailures();
    const c = await signedIn(h, shop, ip());
    const all = await c.get('/cabinet/notifications');
    expect(all.status).toBe(200);
    const events = await eventsOf(shop.shop.id);
    expect(ids(all.body)).toEqual(events.map((e) => `evt_${e.id}`).reverse());
    expect(all.body).toContain('activated.subscription');
    expect(all.body).toContain('class="badge pending"');
    expect(all.body).toContain(DEAD);

    const created = await c.get('/cabinet/notifications?event=created.subscription');
    expect(ids(created.body)).toHaveLength(2);
    const one = await c.get(`/cabinet/notifications?resource_id=${subs[0]}`);
    expect(ids(one.body)).toHaveLength(2);
    expect((await c.get('/cabinet/notifications?status=delivered')).body).toContain(
      'No notifications match.',
    );

    // The overview links to the failed ones.
    const last = events[events.length - 1];
    await h.db.query(`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1`, [
      last?.id,
    ]);
    const failed = await c.get('/cabinet/notifications?status=failed');
    expect(failed.status).toBe(200);
    expect(ids(failed.body)).toEqual([`evt_${last?.id}`]);
    expect(failed.body).toContain('class="badge failed"');

    const bad = await c.get('/cabinet/notifications?status=lost');
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('Choose a status from the list.');
  });

  it('pages through a long list by keyset, keeping the filters', async () => {
    const shop = await newShop(h);
    await h.db.query(
      `WITH e AS (
         INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url, mail_status)
         SELECT $1, 'subscription', 'sbs_page' || n, 'renewed.subscription', '{}'::jsonb, now(), $2, 'done'
         FROM generate_series(1, 55) n
         RETURNING id, shop_id, resource_id
       )
       INSERT INTO deliveries (event_id, shop_id, resource_id, status) SELECT id, shop_id, resource_id, 'delivered' FROM e`,
      [shop.shop.id, DEAD],
    );
    const c = await signedIn(h, shop, ip());
    const first = await c.get('/cabinet/notifications?status=delivered');
    expect(ids(first.body)).toHaveLength(50);
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&') as string;
    expect(next).toContain('status=delivered');
    expect(next).toContain('after=');
    const second = await c.get(next);
    expect(ids(second.body)).toHaveLength(5);
    expect(second.body).not.toContain('rel="next"');
    const seen = new Set([...ids(first.body), ...ids(second.body)]);
    expect(seen.size).toBe(55);
  });

  it('shows one notification: payload escaped, headers without the secret, every attempt', async () => {
    const { shop, subs } = await shopWithFailures();
    const c = await signedIn(h, shop, ip());
    const events = await eventsOf(shop.shop.id);
    const created = events[2];
    const page = await c.get(`/cabinet/notifications/evt_${created?.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(subs[1]);
    // The buyer's text is shown as text, never as markup.
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(page.body).toContain('Content-Signature: ');
    // The signature shown is the one sent: it verifies over the notification's body.
    const shown = /Content-Signature: ([A-Za-z0-9+/=]+)/.exec(page.body)?.[1] as string;
    const [stored] = await h.db.query<{ payload: Record<string, unknown> }>(
      'SELECT payload FROM events WHERE id = $1',
      [created?.id],
    );
    const body = Buffer.from(notificationBody({ payload: stored?.payload ?? {} }));
    expect(verify('sha256', body, shop.shop.publicKey, Buffer.from(shown, 'base64'))).toBe(true);
    expect(page.body).toContain(`Kopek-Event-Id: evt_${created?.id}`);
    expect(page.body).not.toContain(shop.secret);
    expect(page.body).not.toContain(Buffer.from(`${shop.shop.id}:${shop.secret}`).toString('base64'));
    // The refused attempt, with its error.
    expect(page.body).toMatch(/ECONNREFUSED|refused/i);
    expect(page.body).toContain('no answer');
  });

  it('answers another shop’s notification, and a malformed id, with not found', async () => {
    const { shop } = await shopWithFailures();
    const [theirs] = await eventsOf(shop.shop.id);
    const other = await newShop(h);
    const c = await signedIn(h, other, ip());
    for (const url of [
      `/cabinet/notifications/evt_${theirs?.id}`,
      '/cabinet/notifications/evt_x',
      '/cabinet/notifications/1',
    ]) {
      const res = await c.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body).toContain('belongs to another shop');
    }
    await c.get('/cabinet/notifications');
    const resend = await c.post(`/cabinet/notifications/evt_${theirs?.id}/resend`, {});
    expect(resend.status).toBe(404);
    expect((await eventsOf(shop.shop.id))[0]).toEqual(theirs);
  });

  it('refuses a re-send without its CSRF token, and changes nothing', async () => {
    const { shop } = await shopWithFailures();
    const [event] = await eventsOf(shop.shop.id);
    await h.db.query(`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1`, [
      event?.id,
    ]);
    const c = await signedIn(h, shop, ip());
    await c.get(`/cabinet/notifications/evt_${event?.id}`);
    const res = await h.app.inject({
      method: 'POST',
      url: `/cabinet/notifications/evt_${event?.id}/resend`,
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: '',
    });
    expect(res.statusCode).toBe(403);
    const [after] = await eventsOf(shop.shop.id);
    expect(after).toMatchObject({ status: 'failed', next_attempt_at: null });
  });

  it('re-sends: the notification is pending again with a new attempt due now', async () => {
    const { shop } = await shopWithFailures();
    const [event] = await eventsOf(shop.shop.id);
    await h.db.query(`UPDATE deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1`, [
      event?.id,
    ]);
    const c = await signedIn(h, shop, ip());
    await c.get(`/cabinet/notifications/evt_${event?.id}`);
    const res = await c.post(`/cabinet/notifications/evt_${event?.id}/resend`, {});
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/cabinet/notifications/evt_${event?.id}?done=resent`);
    const [after] = await eventsOf(shop.shop.id);
    expect(after?.status).toBe('pending');
    expect(after?.series_from).toBe(after?.attempts);
    expect(after?.next_attempt_at?.getTime()).toBeLessThanOrEqual(h.clock.now().getTime());
    const page = await c.get(res.location as string);
    expect(page.body).toContain('a new attempt is due now');
    // The deliverer takes it at once: a second attempt is recorded.
    await deliverDue(h.app.services, { shopId: shop.shop.id });
    const [again] = await eventsOf(shop.shop.id);
    expect(again?.attempts).toBe((event?.attempts ?? 0) + 1);
  });

  it('sends a visitor without a session to sign in', async () => {
    const res = await cabinetClient(h, ip()).get('/cabinet/notifications');
    expect(res.status).toBe(303);
  });
});
