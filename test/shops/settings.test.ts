import { createPublicKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { client, type Harness, harness, newShop } from '../harness.js';

/** GET /shop and PATCH /shop: a shop reads and changes its own settings. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

async function setup(input: { test?: boolean } = {}) {
  const shop = await newShop(h, input);
  return { shop, api: client(h, shop) };
}

const patch = (api: ReturnType<typeof client>, body: unknown) => api.send('PATCH', '/shop', body);

describe('GET /shop', () => {
  it("answers the shop's settings and its public key as PEM and as the PEM's bare base64", async () => {
    const { shop, api } = await setup();
    const res = await api.get('/shop');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: shop.shop.id,
      name: 'Test shop',
      test: true,
      three_d_secure: false,
      email_notifications: false,
      notification_email: null,
      return_url: null,
      time_zone: 'UTC',
      retry_schedule: null,
      quiet_hours: null,
      public_key: shop.shop.publicKey,
      public_key_base64: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/),
      notification_auth: 'basic',
      webhook_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      webhook_secret_previous_until: null,
      pending_public_key: null,
      pending_public_key_base64: null,
      frame_origins: null,
    });
    // The base64 form is the same key, as DER.
    const der = createPublicKey({
      key: Buffer.from(res.body.public_key_base64, 'base64'),
      format: 'der',
      type: 'spki',
    });
    expect(der.export({ type: 'spki', format: 'pem' })).toBe(shop.shop.publicKey);
  });

  it('asks for credentials', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/shop' });
    expect(res.statusCode).toBe(401);
    expect(res.json().errors.base).toHaveLength(1);
  });
});

describe('PATCH /shop', () => {
  it('changes the settings given, keeps the others, ignores unknown fields and answers them all', async () => {
    const { shop, api } = await setup({ test: false });
    const res = await patch(api, {
      three_d_secure: true,
      email_notifications: true,
      notification_email: 'billing@shop.example',
      return_url: 'https://shop.example/thanks',
      time_zone: 'europe/minsk',
      retry_schedule: { failed: ['p1d', 'P3D'], error: ['PT1H'] },
      quiet_hours: { start: '20:00', end: '8:00' },
      name: 'Renamed',
      test: true,
      colour: 'red',
    });
    expect(res.status, res.text).toBe(200);
    const changed = {
      id: shop.shop.id,
      name: 'Test shop',
      test: false,
      three_d_secure: true,
      email_notifications: true,
      notification_email: 'billing@shop.example',
      return_url: 'https://shop.example/thanks',
      time_zone: 'Europe/Minsk',
      retry_schedule: { failed: ['P1D', 'P3D'], error: ['PT1H'] },
      quiet_hours: { start: '20:00', end: '08:00' },
    };
    expect(res.body).toMatchObject(changed);
    expect((await api.get('/shop')).body).toMatchObject(changed);

    // Null clears what may be empty; a field not given stays.
    const cleared = await patch(api, { retry_schedule: null, quiet_hours: null, return_url: null });
    expect(cleared.body).toMatchObject({
      ...changed,
      retry_schedule: null,
      quiet_hours: null,
      return_url: null,
    });
    // No body at all changes nothing and answers the settings.
    const empty = await h.app.inject({
      method: 'PATCH',
      url: '/shop',
      headers: { authorization: shop.auth },
    });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual(cleared.body);
  });

  it('takes effect on the very next request: 3-D Secure on makes a new subscription redirect', async () => {
    const { api } = await setup();
    expect((await patch(api, { three_d_secure: true })).status).toBe(200);
    const res = await api.post('/subscriptions', {
      plan: { title: 'Gold', currency: 'EUR', plan: { amount: 100, interval: 1, interval_unit: 'month' } },
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      card: {
        number: '4012000000001097',
        verification_value: '123',
        holder: 'JANE DOE',
        exp_month: '12',
        exp_year: '2035',
      },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.state).toBe('redirecting');
  });

  it('refuses invalid values with 422, naming every field, and changes nothing', async () => {
    const { api } = await setup();
    const before = (await api.get('/shop')).body;
    const res = await patch(api, {
      three_d_secure: 'yes',
      email_notifications: 1,
      notification_email: 'not an address',
      return_url: 'ftp://shop.example/',
      time_zone: 'Mars/Olympus',
      retry_schedule: { failed: ['PT1S'] },
      quiet_hours: { start: '25:00', end: '08:00' },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      three_d_secure: ['must be true or false'],
      email_notifications: ['must be true or false'],
      notification_email: ['is invalid'],
      return_url: ['must be an absolute http(s) URL'],
      time_zone: ['is not an IANA time zone such as Europe/Minsk or UTC'],
      retry_schedule: ['failed delay PT1S must be between PT1M and P30D'],
      quiet_hours: ['start must be a time of day such as 20:00'],
    });
    expect(res.body.message).toMatch(/^Three d secure must be true or false, .*, and Quiet hours start/);
    expect((await api.get('/shop')).body).toEqual(before);

    const nullZone = await patch(api, { time_zone: null });
    expect(nullZone.status).toBe(422);
    expect(nullZone.body.errors).toEqual({
      time_zone: ['is not an IANA time zone such as Europe/Minsk or UTC'],
    });
  });

  it("names the origins that may frame the shop's checkout pages, as origins; null lets any site", async () => {
    const { api } = await setup();
    const set = await api.send('PATCH', '/shop', {
      frame_origins: [
        'https://shop.example',
        'https://shop.example/',
        'http://127.0.0.2:8080',
        'HTTPS://Other.Example',
      ],
    });
    expect(set.status).toBe(200);
    expect(set.body.frame_origins).toEqual([
      'https://shop.example',
      'http://127.0.0.2:8080',
      'https://other.example',
    ]);
    expect((await api.get('/shop')).body.frame_origins).toEqual(set.body.frame_origins);
    for (const bad of [
      ['https://shop.example/pay'],
      ['*'],
      ['shop.example'],
      ['https://shop.example?x=1'],
      'https://a.example',
    ]) {
      const refused = await api.send('PATCH', '/shop', { frame_origins: bad });
      expect(refused.status, JSON.stringify(bad)).toBe(422);
      expect(JSON.stringify(refused.body.errors)).toContain('frame_origins');
    }
    const many = Array.from({ length: 21 }, (_, i) => `https://s${i}.example`);
    expect((await api.send('PATCH', '/shop', { frame_origins: many })).status).toBe(422);
    expect((await api.get('/shop')).body.frame_origins).toEqual(set.body.frame_origins);
    const cleared = await api.send('PATCH', '/shop', { frame_origins: null });
    expect(cleared.body.frame_origins).toBeNull();
  });

  it('refuses e-mail notifications without an address to send them to', async () => {
    const { api } = await setup();
    const res = await patch(api, { email_notifications: true });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      notification_email: ["can't be blank while email_notifications is on"],
    });
    expect((await patch(api, { email_notifications: true, notification_email: 'a@b.example' })).status).toBe(
      200,
    );
    const clear = await patch(api, { notification_email: null });
    expect(clear.status).toBe(422);
  });

  it("changes only the caller's shop, and asks for credentials", async () => {
    const a = await setup();
    const b = await setup();
    await patch(a.api, { time_zone: 'Asia/Tokyo' });
    expect((await b.api.get('/shop')).body.time_zone).toBe('UTC');
    const res = await h.app.inject({
      method: 'PATCH',
      url: '/shop',
      headers: { 'content-type': 'application/json' },
      payload: '{"time_zone":"Asia/Tokyo"}',
    });
    expect(res.statusCode).toBe(401);
  });
});
