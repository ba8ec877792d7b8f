import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currencyMonths, window30 } from '../../src/cabinet/overview/routes.js';
import { deliverDue } from '../../src/notifications/deliver.js';
import { type Client, client, type Harness, harness, newShop, type TestShop, withClock } from '../harness.js';
import { type Receiver, startReceiver } from '../notifications/receiver.js';
import { card, cardBody, monthly } from '../subscriptions/helpers.js';
import { signedIn } from './session.js';

/** The cabinet's overview: counts by state, the last 30 days' money per currency, and what needs attention. */

// 20:00 UTC is already the next day in Tokyo: the day a payment counts for is the shop's day.
const NOW = '2026-01-15T20:00:00.000Z';

async function create(api: Client, body: Record<string, unknown>) {
  const res = await api.post('/subscriptions', body);
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; state: string };
}

/** The overview as the shop sees it at NOW (signed in then too: sessions live on the same clock). */
async function overviewOf(h: Harness, shop: TestShop): Promise<string> {
  return withClock(h, NOW, async () => {
    const c = await signedIn(h, shop);
    const res = await c.get('/cabinet');
    expect(res.status).toBe(200);
    return res.body;
  });
}

const stat = (html: string, state: string) =>
  new RegExp(`href="/cabinet/subscriptions\\?state=${state}"><span class="value">(\\d+)</span>`).exec(
    html,
  )?.[1];

describe('cabinet overview', () => {
  let h: Harness;
  let shop: TestShop;
  let receiver: Receiver;
  let declined: { id: string };

  beforeAll(async () => {
    h = await harness();
    receiver = await startReceiver(() => ({ status: 503 }));
    shop = await newShop(h, { name: 'Overview shop' });
    await h.db.query(`UPDATE shops SET time_zone = 'Asia/Tokyo' WHERE id = $1`, [shop.shop.id]);
    const api = client(h, shop);
    await withClock(h, NOW, async () => {
      await create(api, cardBody());
      await create(api, cardBody({ notification_url: receiver.url }));
      await create(
        api,
        cardBody({
          plan: monthly({ currency: 'USD', plan: { amount: 500, interval: 1, interval_unit: 'month' } }),
        }),
      );
      declined = await create(api, cardBody({ card: card('4005550000000019') }));
      await deliverDue(h.app.services, { shopId: shop.shop.id });
    });
  });
  afterAll(() => receiver.close());

  it('counts subscriptions by state, each count linking to the list it counts', async () => {
    const html = await overviewOf(h, shop);
    expect(stat(html, 'active')).toBe('3');
    expect(stat(html, 'failed')).toBe('1');
    expect(stat(html, 'canceled')).toBeUndefined();
    expect(html).toMatch(/href="\/cabinet\/subscriptions"><span class="value">4<\/span>/);
  });

  it('sums the last 30 days per currency, by the shop’s day, with a chart and its table', async () => {
    const html = await overviewOf(h, shop);
    expect(html).toContain('<h3>EUR</h3>');
    expect(html).toContain('<h3>USD</h3>');
    // EUR first: the busier currency.
    expect(html.indexOf('<h3>EUR</h3>')).toBeLessThan(html.indexOf('<h3>USD</h3>'));
    expect(html).toContain('Revenue per day in EUR, last 30 days: €39.98 in total');
    expect(html).toContain('Revenue per day in USD, last 30 days: $5.00 in total');
    expect(html).toMatch(
      /<th scope="row">Fri, 16 Jan 2026<\/th><td class="num"><span class="money">€39.98<\/span><\/td><td class="num">2<\/td><td class="num">1<\/td>/,
    );
    expect(html).toMatch(/<th scope="row">Thu, 15 Jan 2026<\/th><td class="num"><span class="money">€0.00/);
    expect(html).toContain('Asia/Tokyo');
    // One bar per day, drawn without style attributes (the CSP allows none).
    const eurChart = html.slice(
      html.indexOf('id="chart-EUR-title"'),
      html.indexOf('</svg>', html.indexOf('chart-EUR')),
    );
    expect(eurChart.match(/<rect /g)).toHaveLength(30);
    expect(html).not.toContain('style=');
    expect(html).toContain('role="img"');
  });

  it('lists failed charges and failing notifications under "needs attention"', async () => {
    let html = await overviewOf(h, shop);
    expect(html).toContain('Latest failed charges');
    expect(html).toContain('Payment was declined');
    expect(html).toContain(`href="/cabinet/subscriptions/${declined.id}"`);
    expect(html).toContain('Being retried after a failed delivery: 1');
    expect(html).toContain('href="/cabinet/notifications?status=failed"');
    await h.db.query(
      `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL
       WHERE event_id = (SELECT min(event_id) FROM deliveries WHERE shop_id = $1 AND status = 'pending')`,
      [shop.shop.id],
    );
    html = await overviewOf(h, shop);
    expect(html).toContain('Could not be delivered: 1');
  });

  it('shows subscriptions waiting to retry a failed renewal, with the retry time', async () => {
    const other = await newShop(h, { name: 'Retry shop' });
    const api = client(h, other);
    const sub = await withClock(h, NOW, () => create(api, cardBody({ card: card('4000000000000226') })));
    await withClock(h, NOW, async () => {
      const res = await api.post('/test_clock/advance', { by: 'P32D' });
      expect(res.status, res.text).toBe(200);
    });
    const html = await overviewOf(h, other);
    expect(html).toContain('Subscriptions waiting to retry a failed charge');
    expect(html).toContain(`href="/cabinet/subscriptions/${sub.id}"`);
    expect(html).toMatch(/failed attempts: [12] ·/);
    expect(html).toMatch(/Next retry: <time datetime="2026-02-\d\dT/);
    // The renewal's failure is one of the last 30 days on the shop's own (advanced) clock.
    expect(html).toContain('Insufficient funds');
  });

  it('says so when nothing needs attention and no money moved', async () => {
    const empty = await newShop(h, { name: 'Quiet shop' });
    const c = await signedIn(h, empty);
    const res = await c.get('/cabinet');
    expect(res.status).toBe(200);
    expect(res.body).toContain('Nothing needs your attention.');
    expect(res.body).toContain('No payments in the last 30 days.');
    const ru = await h.app.inject({
      method: 'GET',
      url: '/cabinet',
      headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'accept-language': 'ru' },
    });
    expect(ru.body).toContain('Ничего не требует вашего внимания.');
  });
});

describe('the overview’s 30 days', () => {
  it('are 30 whole days of the shop’s calendar, across a change of summer time', () => {
    const { from, to, days } = window30(new Date('2026-04-10T12:00:00Z'), 'Europe/Berlin');
    expect(days).toHaveLength(30);
    expect(new Set(days.map((d) => d.toFormat('yyyy-MM-dd'))).size).toBe(30);
    expect(from.toISOString()).toBe('2026-03-11T23:00:00.000Z');
    expect(to.toISOString()).toBe('2026-04-10T22:00:00.000Z');
  });

  it('fill the days without money with zeros, per currency', () => {
    const { days } = window30(new Date('2026-04-10T12:00:00Z'), 'UTC');
    const months = currencyMonths(
      [
        { day: '2026-04-10', currency: 'JPY', revenue: 1200, refunded: 0, paid: 2, failed: 0 },
        { day: '2026-04-01', currency: 'EUR', revenue: 999, refunded: 100, paid: 1, failed: 3 },
      ],
      days,
      'en',
    );
    expect(months.map((m) => m.currency)).toEqual(['JPY', 'EUR']);
    expect(months[1]).toMatchObject({ revenue: 999, refunded: 100, paid: 1, failed: 3 });
    expect(months[1]?.days.filter((d) => d.revenue > 0)).toHaveLength(1);
    expect(months[0]?.days.at(-1)).toMatchObject({ revenue: 1200, paid: 2, label: '10' });
  });
});
