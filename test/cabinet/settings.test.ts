import { beforeAll, describe, expect, it } from 'vitest';
import { findShopRow } from '../../src/shops/repository.js';
import { client, type Harness, harness, newShop } from '../harness.js';
import { frozen, payments, setup, subscribe } from '../test-clock/support.js';
import { signedIn } from './session.js';

/** The cabinet's settings and a test shop's clock. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

let ipSeq = 1;
const ip = () => `10.33.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

const valid = {
  three_d_secure: 'on',
  email_notifications: 'on',
  notification_email: 'owner@shop.example',
  return_url: 'https://shop.example/thanks',
  time_zone: 'Europe/Minsk',
  retry_failed: 'P1D, P3D',
  retry_error: 'PT1H',
  quiet_start: '20:00',
  quiet_end: '8:00',
};

describe('cabinet settings', () => {
  it('shows the settings, the shop id and the notification public key as PEM and base64', async () => {
    const shop = await newShop(h);
    const c = await signedIn(h, shop, ip());
    const page = await c.get('/cabinet/settings');
    expect(page.status).toBe(200);
    const api = (await client(h, shop).get('/shop')).body;
    expect(page.body).toContain(String(shop.shop.id));
    expect(page.body).toContain('-----BEGIN PUBLIC KEY-----');
    expect(page.body).toContain(api.public_key_base64);
    expect(page.body).toContain('<option value="Europe/Minsk">');
    expect(page.body).toContain('href="/cabinet/test-clock"');
  });

  it('saves every field through the verb of PATCH /shop', async () => {
    const shop = await newShop(h);
    const c = await signedIn(h, shop, ip());
    await c.get('/cabinet/settings');
    const res = await c.post('/cabinet/settings', valid);
    expect(res.status, res.body).toBe(303);
    expect(res.location).toBe('/cabinet/settings?done=saved');
    const api = (await client(h, shop).get('/shop')).body;
    expect(api).toMatchObject({
      three_d_secure: true,
      email_notifications: true,
      notification_email: 'owner@shop.example',
      return_url: 'https://shop.example/thanks',
      time_zone: 'Europe/Minsk',
      retry_schedule: { failed: ['P1D', 'P3D'], error: ['PT1H'] },
      quiet_hours: { start: '20:00', end: '08:00' },
    });
    const page = await c.get(res.location as string);
    expect(page.body).toContain('Settings saved.');
    expect(page.body).toContain('value="P1D, P3D"');
    expect(page.body).toContain('<option value="Europe/Minsk" selected>');

    // Unticked boxes and empty fields turn things off and clear them.
    const cleared = await c.post('/cabinet/settings', { time_zone: 'UTC' });
    expect(cleared.status).toBe(303);
    const after = (await client(h, shop).get('/shop')).body;
    expect(after).toMatchObject({
      three_d_secure: false,
      email_notifications: false,
      notification_email: null,
      return_url: null,
      time_zone: 'UTC',
      retry_schedule: null,
      quiet_hours: null,
    });
  });

  it('shows invalid values with 422 beside their fields, keeps what was typed and saves nothing', async () => {
    const shop = await newShop(h);
    const c = await signedIn(h, shop, ip());
    await c.get('/cabinet/settings');
    const before = await findShopRow(h.db, shop.shop.id);
    const res = await c.post('/cabinet/settings', {
      ...valid,
      notification_email: 'not-an-address',
      return_url: 'javascript:alert(1)',
      time_zone: 'Mars/Olympus',
      retry_failed: 'P1D, soon',
      quiet_start: '25:00',
    });
    expect(res.status).toBe(422);
    expect(res.body).toContain('Enter an e-mail address such as shop@example.com.');
    expect(res.body).toContain('Enter an absolute address starting with https:// or http://.');
    expect(res.body).toContain('Choose a time zone from the list.');
    expect(res.body).toContain('Check the retry schedule');
    expect(res.body).toContain('Check the quiet hours');
    expect(res.body).toContain('value="not-an-address"');
    expect(res.body).toContain('value="P1D, soon"');
    expect(res.body).toContain('aria-invalid="true"');
    expect(await findShopRow(h.db, shop.shop.id)).toEqual(before);

    const needsAddress = await c.post('/cabinet/settings', { ...valid, notification_email: '' });
    expect(needsAddress.status).toBe(422);
    expect(needsAddress.body).toContain('Enter an address to send e-mail notifications to');
  });

  it('refuses a form posted without its CSRF token', async () => {
    const shop = await newShop(h);
    const c = await signedIn(h, shop, ip());
    const res = await h.app.inject({
      method: 'POST',
      url: '/cabinet/settings',
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ ...valid }).toString(),
    });
    expect(res.statusCode).toBe(403);
    expect((await findShopRow(h.db, shop.shop.id))?.three_ds).toBe(false);
  });

  it('gives a live shop no test clock', async () => {
    const shop = await newShop(h, { test: false });
    const c = await signedIn(h, shop, ip());
    const settings = await c.get('/cabinet/settings');
    expect(settings.body).not.toContain('/cabinet/test-clock');
    expect((await c.get('/cabinet/test-clock')).status).toBe(404);
    const post = await c.post('/cabinet/test-clock', { amount: '1', unit: 'months' });
    expect(post.status).toBe(404);
    expect((await findShopRow(h.db, shop.shop.id))?.clock_offset_ms).toBe(0);
  });

  it('advances a test shop’s clock and shows the renewal it ran', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const sub = await subscribe(s);
      const c = await signedIn(h, s.shop, ip());
      const page = await c.get('/cabinet/test-clock');
      expect(page.status).toBe(200);
      expect(page.body).toContain('1 Jan 2026, 00:00:00');
      const res = await c.post('/cabinet/test-clock', { amount: '1', unit: 'months', to: '' });
      expect(res.status, res.body).toBe(303);
      expect(res.location).toContain('/cabinet/test-clock?from=2026-01-01T00%3A00%3A00.000Z');
      expect(await payments(h, s, sub.id)).toHaveLength(2);
      const after = await c.get(res.location as string);
      expect(after.body).toContain('1 Feb 2026, 00:00:00');
      expect(after.body).toContain('renewed.subscription');
      expect(after.body).toContain(`href="/cabinet/subscriptions/${sub.id}"`);
      expect(after.body).toContain('Charges: 1 (successful 1');
      const clock = (await s.api.get('/test_clock')).body;
      expect(clock.test_clock.now).toBe('2026-02-01T00:00:00.000Z');
    }));

  it('explains an advance it cannot make', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const c = await signedIn(h, s.shop, ip());
      await c.get('/cabinet/test-clock');
      const none = await c.post('/cabinet/test-clock', { amount: '', unit: 'days', to: '' });
      expect(none.status).toBe(422);
      expect(none.body).toContain('Enter a whole number from 1 to 1000, or a date.');
      const past = await c.post('/cabinet/test-clock', { amount: '', unit: 'days', to: '2025-06-01' });
      expect(past.status).toBe(422);
      expect(past.body).toContain('The clock only moves forward');
      const huge = await c.post('/cabinet/test-clock', { amount: '99999', unit: 'years', to: '' });
      expect(huge.status).toBe(422);
      expect((await findShopRow(h.db, s.shop.shop.id))?.clock_offset_ms).toBe(0);
    }));

  it('starts a test shop over: everything it did deleted, its clock at now', () =>
    frozen(h, async () => {
      const s = await setup(h);
      const sub = await subscribe(s);
      const c = await signedIn(h, s.shop, ip());
      await c.get('/cabinet/test-clock');
      await c.post('/cabinet/test-clock', { amount: '1', unit: 'years', to: '' });
      const page = await c.get('/cabinet/test-clock');
      expect(page.body).toContain('action="/cabinet/test-clock/reset"');
      const res = await c.post('/cabinet/test-clock/reset', {});
      expect(res.status, res.body).toBe(303);
      expect(res.location).toBe('/cabinet/test-clock?done=reset');
      const after = await c.get(res.location as string);
      expect(after.body).toContain('The shop starts over');
      expect(after.body).toContain('1 Jan 2026, 00:00:00');
      expect((await s.api.get('/test_clock')).body.test_clock.now).toBe('2026-01-01T00:00:00.000Z');
      expect((await s.api.get(`/subscriptions/${sub.id}`)).status).toBe(404);
      expect(await payments(h, s, sub.id)).toEqual([]);
      // Still signed in: the cabinet's session is the shop's, not something it did.
      expect((await c.get('/cabinet/subscriptions')).status).toBe(200);
    }));

  it('starts no live shop over, and never without the form token', async () => {
    const live = await newShop(h, { test: false });
    const api = client(h, live);
    expect((await api.post('/customers', { email: 'kept@example.com', ip: '203.0.113.9' })).status).toBe(201);
    const c = await signedIn(h, live, ip());
    await c.get('/cabinet/settings');
    expect((await c.post('/cabinet/test-clock/reset', {})).status).toBe(404);
    expect(JSON.stringify((await api.get('/customers')).body)).toContain('kept@example.com');
    const test = await setup(h);
    await subscribe(test);
    const t = await signedIn(h, test.shop, ip());
    await t.get('/cabinet/test-clock');
    expect((await t.post('/cabinet/test-clock/reset', { _csrf: 'forged' })).status).toBe(403);
    expect(((await test.api.get('/subscriptions')).body as unknown[]).length).toBe(1);
  });
});
