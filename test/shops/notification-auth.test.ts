import { beforeAll, describe, expect, it } from 'vitest';
import { client, type Harness, harness, newShop } from '../harness.js';

/** The shop's notification settings through the API: notification_auth and its key routes. */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

async function setup() {
  const shop = await newShop(h);
  return { shop, api: client(h, shop) };
}

describe('notification_auth', () => {
  it('starts as basic, changes to signature and back, and is shown by GET /shop', async () => {
    const { api } = await setup();
    expect((await api.get('/shop')).body.notification_auth).toBe('basic');
    const changed = await api.send('PATCH', '/shop', { notification_auth: 'signature' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.notification_auth).toBe('signature');
    expect((await api.get('/shop')).body.notification_auth).toBe('signature');
    // Another setting changed alone leaves it as it is.
    await api.send('PATCH', '/shop', { time_zone: 'Asia/Tokyo' });
    expect((await api.get('/shop')).body.notification_auth).toBe('signature');
    await api.send('PATCH', '/shop', { notification_auth: 'basic' });
    expect((await api.get('/shop')).body.notification_auth).toBe('basic');
  });

  it.each([['none'], ['Basic'], [''], [null], [1], [true], [['basic']]])(
    'refuses %j with 422 in the contract’s shape and changes nothing',
    async (value) => {
      const { api } = await setup();
      const before = (await api.get('/shop')).body;
      const res = await api.send('PATCH', '/shop', { notification_auth: value, time_zone: 'Asia/Tokyo' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        message: 'Notification auth must be one of: basic, signature',
        errors: { notification_auth: ['must be one of: basic, signature'] },
      });
      expect((await api.get('/shop')).body).toEqual(before);
    },
  );
});

describe('notification key routes', () => {
  it('ask for credentials and act on the caller’s shop only', async () => {
    const a = await setup();
    const b = await setup();
    for (const url of [
      '/shop/webhook_secret/rotate',
      '/shop/signing_key/rotate',
      '/shop/signing_key/confirm',
    ]) {
      const res = await h.app.inject({ method: 'POST', url });
      expect(res.statusCode).toBe(401);
    }
    const before = (await b.api.get('/shop')).body;
    expect((await a.api.post('/shop/webhook_secret/rotate')).status).toBe(200);
    expect((await a.api.post('/shop/signing_key/rotate')).status).toBe(200);
    expect((await b.api.get('/shop')).body).toEqual(before);
    expect((await b.api.post('/shop/signing_key/confirm')).status).toBe(422);
  });

  it('rotating the webhook secret twice in a day keeps only the last one replaced signing beside it', async () => {
    const { api } = await setup();
    const first = (await api.post('/shop/webhook_secret/rotate')).body;
    const second = (await api.post('/shop/webhook_secret/rotate')).body;
    expect(second.webhook_secret).not.toBe(first.webhook_secret);
    expect(second.webhook_secret_previous_until).toEqual(expect.any(String));
  });
});
