import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notifications/deliver.js';
import { findShopRow } from '../../src/shops/repository.js';
import { client, type Harness, harness, newShop } from '../harness.js';
import { type Receiver, startReceiver } from '../notifications/receiver.js';
import { cardBody } from '../subscriptions/helpers.js';
import { signedIn } from './session.js';

/**
 * The cabinet's side of signed notifications: how they authenticate (a setting), the webhook signing
 * secret and its rotation, the RSA key's rotation and confirmation, and the headers a notification
 * page shows.
 */

let h: Harness;
let rx: Receiver;
beforeAll(async () => {
  h = await harness();
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
});

let ipSeq = 1;
const ip = () => `10.47.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

const form = {
  time_zone: 'UTC',
  notification_auth: 'signature',
};

/** The text of a textarea or input on the page, by id. */
const fieldText = (html: string, id: string) =>
  new RegExp(`id="${id}"[^>]*?(?:value="([^"]*)"[^>]*>|>([^<]*)</textarea>)`)
    .exec(html)
    ?.slice(1)
    .find(Boolean);

describe('cabinet notification signing', () => {
  it('shows and saves how notifications authenticate; refuses a value it does not know', async () => {
    const shop = await newShop(h);
    const c = await signedIn(h, shop, ip());
    const page = await c.get('/cabinet/settings');
    expect(page.body).toContain('<option value="basic" selected>');
    const saved = await c.post('/cabinet/settings', form);
    expect(saved.status, saved.body).toBe(303);
    expect((await client(h, shop).get('/shop')).body.notification_auth).toBe('signature');
    expect((await c.get('/cabinet/settings')).body).toContain('<option value="signature" selected>');

    const before = await findShopRow(h.db, shop.shop.id);
    const bad = await c.post('/cabinet/settings', { ...form, notification_auth: 'none' });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('Choose how notifications authenticate.');
    expect(await findShopRow(h.db, shop.shop.id)).toEqual(before);
  });

  it('shows the webhook signing secret and rotates it, the old one signing 24 hours more', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const c = await signedIn(h, shop, ip());
    const page = await c.get('/cabinet/settings');
    const secret = (await api.get('/shop')).body.webhook_secret as string;
    expect(fieldText(page.body, 'webhook-secret-value')).toBe(secret);
    expect(page.body).not.toContain('The previous secret signs too');

    const rotated = await c.post('/cabinet/settings/webhook-secret', {});
    expect(rotated.status, rotated.body).toBe(303);
    expect(rotated.location).toBe('/cabinet/settings?done=secret-rotated');
    const after = await c.get(rotated.location as string);
    const fresh = (await api.get('/shop')).body.webhook_secret as string;
    expect(fresh).not.toBe(secret);
    expect(fieldText(after.body, 'webhook-secret-value')).toBe(fresh);
    expect(after.body).toContain('A new webhook signing secret is in use');
    expect(after.body).toContain('The previous secret signs too until');
  });

  it('shows a new key pair pending, confirms it, and refuses to confirm when none is pending', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const c = await signedIn(h, shop, ip());
    await c.get('/cabinet/settings');
    const none = await c.post('/cabinet/settings/signing-key/confirm', {});
    expect(none.status).toBe(422);
    expect(none.body).toContain('There is no new key to confirm');

    const rotated = await c.post('/cabinet/settings/signing-key', {});
    expect(rotated.status, rotated.body).toBe(303);
    const page = await c.get(rotated.location as string);
    const pending = (await api.get('/shop')).body.pending_public_key as string;
    expect(pending).toContain('-----BEGIN PUBLIC KEY-----');
    expect(fieldText(page.body, 'pending-key-pem')?.trim()).toBe(pending.trim());
    expect(fieldText(page.body, 'public-key-pem')?.trim()).toBe(shop.shop.publicKey.trim());

    const confirmed = await c.post('/cabinet/settings/signing-key/confirm', {});
    expect(confirmed.status, confirmed.body).toBe(303);
    const after = await c.get(confirmed.location as string);
    expect(after.body).toContain('Notifications are signed with the new key from now on.');
    expect(after.body).not.toContain('id="pending-key-pem"');
    expect(fieldText(after.body, 'public-key-pem')?.trim()).toBe(pending.trim());
    expect((await api.get('/shop')).body).toMatchObject({ public_key: pending, pending_public_key: null });
  });

  it('a notification page shows the Kopek-Signature as sent, and names Basic only where it went', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const c = await signedIn(h, shop, ip());
    // Nothing listens on the discard port of https://127.0.0.1: the attempt is made, and refused.
    const urls = [rx.url, 'https://127.0.0.1:9/hook'];
    for (const url of urls) {
      const res = await api.post('/subscriptions', cardBody({ notification_url: url }));
      expect(res.status, res.text).toBe(201);
    }
    await deliverDue(h.app.services, { shopId: shop.shop.id });
    const list = (await api.get('/notifications?event=created.subscription')).body as {
      id: string;
      url: string;
    }[];
    const plain = list.find((n) => n.url === rx.url)?.id as string;
    const secure = list.find((n) => n.url !== rx.url)?.id as string;

    const plainPage = await c.get(`/cabinet/notifications/${plain}`);
    const received = rx.received.find((r) => r.headers['kopek-event-id'] === plain);
    const sent = String(received?.headers['kopek-signature']);
    expect(sent).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(plainPage.body).toContain(`Kopek-Signature: ${sent}`);
    expect(plainPage.body).not.toContain('Authorization:');

    // Sent as it was even after the secret changed.
    expect((await api.post('/shop/webhook_secret/rotate')).status).toBe(200);
    expect((await c.get(`/cabinet/notifications/${plain}`)).body).toContain(`Kopek-Signature: ${sent}`);

    const securePage = await c.get(`/cabinet/notifications/${secure}`);
    expect(securePage.body).toMatch(/Kopek-Signature: t=\d+,v1=[0-9a-f]{64}/);
    expect(securePage.body).toContain('Authorization: Basic … (your shop id and secret key (not shown))');
    expect(securePage.body).not.toContain(shop.secret);
    expect(securePage.body).not.toContain(Buffer.from(`${shop.shop.id}:${shop.secret}`).toString('base64'));

    await api.send('PATCH', '/shop', { notification_auth: 'signature' });
    expect((await c.get(`/cabinet/notifications/${secure}`)).body).not.toContain('Authorization:');
  });
});
