import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { type Receiver, startReceiver } from '../notifications/receiver.js';
import { card, cardBody, customer, monthly } from '../subscriptions/helpers.js';
import { type CabinetClient, signedIn } from './session.js';

/** The cabinet's subscriptions: filters, paging, a subscription's timeline, cancelling, and its guards. */

const idsOf = (html: string): string[] => [
  ...new Set(
    [...html.matchAll(/href="\/cabinet\/subscriptions\/(sbs_[^"/?]+)"/g)].map((m) => m[1] as string),
  ),
];
const nextOf = (html: string) => /<a href="([^"]+)" rel="next"/.exec(html)?.[1]?.replaceAll('&amp;', '&');

async function create(api: Client, body: Record<string, unknown>) {
  const res = await api.post('/subscriptions', body);
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; state: string; plan: { id: string } };
}

describe('cabinet subscriptions list', () => {
  let h: Harness;
  let shop: TestShop;
  let c: CabinetClient;
  const subs = {} as Record<'a' | 'b' | 'c' | 'd', { id: string; state: string; plan: { id: string } }>;

  beforeAll(async () => {
    h = await harness();
    shop = await newShop(h, { name: 'List shop' });
    const api = client(h, shop);
    subs.a = await create(
      api,
      cardBody({ tracking_id: 'trk-a', customer: customer({ email: 'Ann@Example.com' }) }),
    );
    subs.b = await create(
      api,
      cardBody({
        plan: monthly({ title: 'Silver' }),
        tracking_id: 'trk-b',
        card: card('4005550000000019'),
        customer: customer({ email: 'bob@example.com' }),
      }),
    );
    subs.c = await create(
      api,
      cardBody({ tracking_id: 'trk-c', customer: customer({ email: 'ann@example.com' }) }),
    );
    subs.d = await create(api, {
      plan: monthly({ title: 'Bronze' }),
      customer: customer({ email: 'dan@example.com' }),
    });
    c = await signedIn(h, shop);
  });

  const list = async (query: string) => {
    const res = await c.get(`/cabinet/subscriptions${query}`);
    expect(res.status, res.body).toBe(200);
    return idsOf(res.body);
  };

  it('shows every subscription newest first, with plan, e-mail, amount and state', async () => {
    expect(subs.b.state).toBe('failed');
    const res = await c.get('/cabinet/subscriptions');
    expect(idsOf(res.body)).toEqual([subs.d.id, subs.c.id, subs.b.id, subs.a.id]);
    expect(res.body).toContain('bob@example.com');
    expect(res.body).toContain('Silver');
    expect(res.body).toContain('€19.99');
    expect(res.body).toContain('class="badge failed"');
    expect(res.body).toContain('UTC');
  });

  it('narrows by each filter, and by several at once', async () => {
    const { a, b, c: third, d } = subs;
    expect(await list('?state=failed')).toEqual([b.id]);
    expect(await list('?state=redirecting')).toEqual([d.id]);
    expect(await list('?plan=Gold')).toEqual([third.id, a.id]);
    expect(await list(`?plan=${a.plan.id}`)).toEqual([a.id]);
    expect(await list('?email=ANN%40example.com')).toEqual([third.id, a.id]);
    expect(await list('?email=nobody%40example.com')).toEqual([]);
    // The start of an address finds it; LIKE's wildcards are plain characters.
    expect(await list('?email=An')).toEqual([third.id, a.id]);
    expect(await list('?email=ann%40example.com.')).toEqual([]);
    expect(await list('?email=%25')).toEqual([]);
    expect(await list('?email=_nn')).toEqual([]);
    expect(await list('?tracking_id=trk-b')).toEqual([b.id]);
    expect(await list(`?id=${third.id}`)).toEqual([third.id]);
    expect(await list(`?state=active&plan=Gold&email=ann%40example.com`)).toEqual([third.id, a.id]);
    expect(await list(`?state=failed&plan=Gold`)).toEqual([]);
    // The form keeps what was asked.
    const res = await c.get('/cabinet/subscriptions?state=failed&tracking_id=trk-b');
    expect(res.body).toMatch(/<option value="failed" selected/);
    expect(res.body).toContain('value="trk-b"');
  });

  it('answers an unknown state or an overlong filter with a clear 400 page, not a 500', async () => {
    const bad = await c.get('/cabinet/subscriptions?state=bogus');
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('Choose a state from the list.');
    const long = await c.get(`/cabinet/subscriptions?email=${'a'.repeat(300)}`);
    expect(long.status).toBe(400);
    expect(long.body).toContain('Too long');
    const weird = await c.get('/cabinet/subscriptions?after=-1&state[]=x&id=%27%3B--');
    expect(weird.status).toBe(200);
  });

  it('speaks Russian when asked', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: '/cabinet/subscriptions',
      headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'accept-language': 'ru-RU' },
    });
    expect(res.body).toContain('Следующее списание');
    expect(res.body).toContain('Неуспешна');
  });
});

describe('cabinet subscriptions paging', () => {
  it('walks every page once, newest first, keeping the filters', async () => {
    const h = await harness();
    const shop = await newShop(h, { name: 'Paging shop' });
    const api = client(h, shop);
    const made: string[] = [];
    for (let i = 0; i < 53; i++) {
      made.push((await create(api, { plan: monthly({ title: 'Paged' }), customer: customer() })).id);
    }
    await create(api, { plan: monthly({ title: 'Other' }), customer: customer() });
    const c = await signedIn(h, shop);
    const seen: string[] = [];
    let url: string | undefined = '/cabinet/subscriptions?plan=Paged';
    let pages = 0;
    while (url) {
      const res = await c.get(url);
      expect(res.status).toBe(200);
      seen.push(...idsOf(res.body));
      url = nextOf(res.body);
      if (url) expect(url).toContain('plan=Paged');
      pages += 1;
    }
    expect(pages).toBe(2);
    expect(seen).toEqual([...made].reverse());
  });
});

describe('a subscription in the cabinet', () => {
  let h: Harness;
  let shop: TestShop;
  let api: Client;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await harness();
    shop = await newShop(h, { name: 'Detail shop' });
    api = client(h, shop);
    receiver = await startReceiver(() => ({ status: 500, body: 'down' }));
  });
  afterAll(() => receiver.close());

  it('shows its details and a timeline of charges, state changes and notifications with their attempts', async () => {
    const sub = await create(
      api,
      cardBody({
        notification_url: receiver.url,
        tracking_id: 'order-7',
        customer: customer({ email: 'timeline@example.com', first_name: 'Tina' }),
      }),
    );
    await deliverDue(h.app.services, { shopId: shop.shop.id });
    const c = await signedIn(h, shop);
    const res = await c.get(`/cabinet/subscriptions/${sub.id}`);
    expect(res.status).toBe(200);
    const html = res.body;
    expect(html).toContain('timeline@example.com');
    expect(html).toContain('Visa •••• 0000');
    expect(html).toContain('Charge of period 1, attempt 1');
    expect(html).toContain('class="badge successful"');
    expect(html).toContain('created.subscription');
    expect(html).toContain('activated.subscription');
    expect(html).toContain('State: Active');
    // The failed delivery: its attempt with the receiver's status code, and the retry pending.
    expect(html).toMatch(/Attempt 1: .*500/);
    expect(html).toContain('class="badge pending"');
    expect(html).toMatch(/href="\/cabinet\/notifications\/evt_\d+"/);
    expect(html).toContain(`/cabinet/subscriptions/${sub.id}/cancel`);
  });

  it('cancels only through the confirmation form with its CSRF token, with the reason stored as the API would', async () => {
    const sub = await create(api, cardBody());
    const c = await signedIn(h, shop);
    const confirm = await c.get(`/cabinet/subscriptions/${sub.id}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('name="cancel_reason"');
    expect(confirm.body).toContain('name="_csrf"');

    // No token: refused, and nothing changes.
    const forged = await h.app.inject({
      method: 'POST',
      url: `/cabinet/subscriptions/${sub.id}/cancel`,
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'cancel_reason=forged',
    });
    expect(forged.statusCode).toBe(403);
    expect((await api.get(`/subscriptions/${sub.id}`)).body.state).toBe('active');

    // No reason: the form again, with the problem.
    const blank = await c.post(`/cabinet/subscriptions/${sub.id}/cancel`, { cancel_reason: '  ' });
    expect(blank.status).toBe(422);
    expect(blank.body).toContain('Enter the reason for cancelling.');
    expect((await api.get(`/subscriptions/${sub.id}`)).body.state).toBe('active');

    const done = await c.post(`/cabinet/subscriptions/${sub.id}/cancel`, {
      cancel_reason: 'Customer moved away',
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/cabinet/subscriptions/${sub.id}?done=canceled`);
    const viewed = (await api.get(`/subscriptions/${sub.id}`)).body;
    expect(viewed.state).toBe('canceled');
    expect(viewed.cancel_reason).toBe('Customer moved away');

    const page = await c.get(done.location as string);
    expect(page.body).toContain('The subscription is canceled.');
    expect(page.body).toContain('Customer moved away');
    expect(page.body).toContain('canceled.subscription');
    expect(page.body).not.toContain(`/cabinet/subscriptions/${sub.id}/cancel`);

    // A second post (the back button, a double click) cancels nothing twice.
    await c.get(`/cabinet/subscriptions/${sub.id}`);
    const again = await c.post(`/cabinet/subscriptions/${sub.id}/cancel`, { cancel_reason: 'Twice' });
    expect(again.location).toBe(`/cabinet/subscriptions/${sub.id}?done=already`);
    const events = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE resource_id = $1 AND event = 'canceled.subscription'`,
      [sub.id],
    );
    expect(events[0]?.n).toBe(1);
    expect((await api.get(`/subscriptions/${sub.id}`)).body.cancel_reason).toBe('Customer moved away');
    const confirmAgain = await c.get(`/cabinet/subscriptions/${sub.id}/cancel`);
    expect(confirmAgain.status).toBe(303);
  });

  it('answers another shop’s subscription, or none, with the not-found page', async () => {
    const other = await newShop(h, { name: 'Other shop' });
    const theirs = await create(client(h, other), cardBody());
    const c = await signedIn(h, shop);
    for (const url of [
      `/cabinet/subscriptions/${theirs.id}`,
      `/cabinet/subscriptions/${theirs.id}/cancel`,
      '/cabinet/subscriptions/sbs_nothing',
      `/cabinet/subscriptions/${'x'.repeat(90)}`,
    ]) {
      const res = await c.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body).toContain('Not found');
    }
    // An id past the router's limit is refused before any handler: still a 4xx, never a 500.
    expect((await c.get(`/cabinet/subscriptions/${'x'.repeat(2000)}`)).status).toBe(414);
    await c.get('/cabinet/subscriptions');
    const post = await c.post(`/cabinet/subscriptions/${theirs.id}/cancel`, { cancel_reason: 'Mine now' });
    expect(post.status).toBe(404);
    expect((await client(h, other).get(`/subscriptions/${theirs.id}`)).body.state).toBe('active');
    // Their subscriptions never show in this shop's list, whatever the filter.
    const listed = await c.get(`/cabinet/subscriptions?id=${theirs.id}`);
    expect(idsOf(listed.body)).toEqual([]);
  });

  it('shows what shops and buyers typed as text, never as markup', async () => {
    const evil = '<script>alert(1)</script>';
    const sub = await create(
      api,
      cardBody({ plan: monthly({ title: evil }), tracking_id: '"><img src=x onerror=alert(2)>' }),
    );
    const c = await signedIn(h, shop);
    for (const url of ['/cabinet/subscriptions', `/cabinet/subscriptions/${sub.id}`]) {
      const res = await c.get(url);
      expect(res.body).not.toContain(evil);
      expect(res.body).not.toContain('<img src=x');
      expect(res.body).toContain('&lt;script>alert(1)&lt;/script>');
    }
  });
});
