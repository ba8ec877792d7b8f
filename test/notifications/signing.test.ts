import { afterAll, describe, expect, it } from 'vitest';
import { headersFor } from '../../src/notifications/attempt.js';
import { findShopRow, type ShopRow } from '../../src/shops/repository.js';
import {
  dueRowOf,
  kopekSignatureValid,
  type NotifyShop,
  notifyShop,
  type Receiver,
  signatureValid,
  startReceiver,
  v1Values,
} from './receiver.js';

/**
 * How notifications authenticate: HTTP Basic only over https and only for shops that chose `basic`;
 * every notification signed twice, with the RSA key (Content-Signature) and with the webhook signing
 * secret over its time and body (Kopek-Signature); both keys rotated without a failed check.
 */

const receivers: Receiver[] = [];
async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}
afterAll(async () => {
  for (const r of receivers) await r.close();
});

const shopRow = async (s: NotifyShop) => (await findShopRow(s.h.db, s.shop.shop.id)) as ShopRow;

/** The shop's clock now, in Unix seconds. */
const shopSeconds = async (s: NotifyShop) =>
  Math.floor(Date.parse((await s.api.get('/test_clock')).body.test_clock.now) / 1000);

const basicOf = (s: NotifyShop) =>
  `Basic ${Buffer.from(`${s.shop.shop.id}:${s.shop.secret}`).toString('base64')}`;

/** The headers a notification of the shop to `url` goes with now. */
async function headersTo(s: NotifyShop, url: string): Promise<Record<string, string>> {
  const row = await shopRow(s);
  const at = new Date(s.h.clock.now().getTime() + row.clock_offset_ms);
  const sent = await headersFor(
    s.h.app.services,
    dueRowOf(row, url),
    '{"id":"x"}',
    at,
    row.webhook_secret_enc as string,
  );
  return sent.headers;
}

/** Sends the notification again and delivers it: its newest attempt's request. */
async function resend(s: NotifyShop, rx: Receiver, id: string) {
  expect((await s.api.post(`/notifications/${id}/resend`)).status).toBe(200);
  const before = rx.received.length;
  await s.deliver();
  expect(rx.received).toHaveLength(before + 1);
  return rx.received[before] as Receiver['received'][number];
}

describe('notification credentials', () => {
  it('never sends Basic over plain http://, even for a test shop that chose basic', async () => {
    const rx = await receiver();
    const s = await notifyShop({ test: true });
    expect((await s.api.get('/shop')).body.notification_auth).toBe('basic');
    await s.subscribe(rx.url);
    await s.deliver();
    expect(rx.received).toHaveLength(2);
    for (const r of rx.received) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['kopek-signature']).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);
    }
  });

  it('sends Basic over https for basic, and no credentials at all for signature', async () => {
    const s = await notifyShop();
    expect((await headersTo(s, 'https://shop.example/hook')).authorization).toBe(basicOf(s));
    expect((await headersTo(s, 'HTTPS://shop.example/hook')).authorization).toBe(basicOf(s));
    expect((await headersTo(s, 'http://shop.example/hook')).authorization).toBeUndefined();

    const res = await s.api.send('PATCH', '/shop', { notification_auth: 'signature' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.notification_auth).toBe('signature');
    const headers = await headersTo(s, 'https://shop.example/hook');
    expect(headers.authorization).toBeUndefined();
    expect(Object.values(headers).join('\n')).not.toContain(s.shop.secret);
    expect(headers['content-signature']).toEqual(expect.any(String));
    expect(headers['kopek-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });
});

describe('Kopek-Signature', () => {
  it('verifies with the secret GET /shop shows, over the shop clock time and the raw body; a stale t is refused', async () => {
    const rx = await receiver();
    const s = await notifyShop();
    await s.api.post('/test_clock/advance', { by: 'P3D' });
    await s.subscribe(rx.url);
    await s.deliver();
    const secret = (await s.api.get('/shop')).body.webhook_secret as string;
    expect(secret).toMatch(/^whsec_/);
    const now = await shopSeconds(s);
    for (const r of rx.received) {
      const t = Number(/^t=(\d+),/.exec(String(r.headers['kopek-signature']))?.[1]);
      // The shop's clock, as Kopek-Timestamp: a test shop's runs ahead of real time.
      expect(t).toBe(now);
      expect(String(t)).toBe(r.headers['kopek-timestamp']);
      expect(kopekSignatureValid(r, secret, now)).toBe(true);
      expect(kopekSignatureValid(r, secret, now + 299)).toBe(true);
      // Replayed more than 5 minutes later, or with another body, or checked with another secret.
      expect(kopekSignatureValid(r, secret, now + 301)).toBe(false);
      expect(kopekSignatureValid({ ...r, body: `${r.body} ` }, secret, now)).toBe(false);
      expect(kopekSignatureValid(r, `${secret}x`, now)).toBe(false);
      // The API key is not what signs.
      expect(kopekSignatureValid(r, s.shop.secret, now)).toBe(false);
    }
  });

  it('a shop created before webhook secrets gets one on its first notification, the one GET /shop shows', async () => {
    const rx = await receiver();
    const s = await notifyShop();
    // As the migration leaves an older shop: no secret yet.
    await s.h.db.query('UPDATE shops SET webhook_secret_enc = NULL WHERE id = $1', [s.shop.shop.id]);
    await s.subscribe(rx.url);
    await s.deliver();
    expect(rx.received).toHaveLength(2);
    const stored = (await shopRow(s)).webhook_secret_enc;
    expect(stored).not.toBeNull();
    const secret = (await s.api.get('/shop')).body.webhook_secret as string;
    // Given once: both notifications and GET /shop use the same secret.
    expect((await shopRow(s)).webhook_secret_enc).toBe(stored);
    const now = await shopSeconds(s);
    for (const r of rx.received) expect(kopekSignatureValid(r, secret, now)).toBe(true);

    // An older shop asked through GET /shop first keeps the secret it was shown.
    await s.h.db.query('UPDATE shops SET webhook_secret_enc = NULL WHERE id = $1', [s.shop.shop.id]);
    const shown = (await s.api.get('/shop')).body.webhook_secret as string;
    expect(shown).not.toBe(secret);
    expect((await s.api.get('/shop')).body.webhook_secret).toBe(shown);
  });
});

describe('rotation', () => {
  it('a rotated webhook secret signs beside the old one for 24 hours of the shop clock, then alone', async () => {
    const rx = await receiver();
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    await s.deliver();
    const id = (await s.api.get(`/notifications?resource_id=${sub}`)).body[0].id as string;
    const old = (await s.api.get('/shop')).body.webhook_secret as string;

    const rotated = await s.api.post('/shop/webhook_secret/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const fresh = rotated.body.webhook_secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    const until = Date.parse(rotated.body.webhook_secret_previous_until);
    expect(until).toBe((await shopSeconds(s)) * 1000 + 24 * 3600_000);

    const during = await resend(s, rx, id);
    const now = await shopSeconds(s);
    const [first, second, ...more] = v1Values(during);
    expect(more).toEqual([]);
    // New first, then old: a receiver with either secret accepts it.
    expect(kopekSignatureValid(during, fresh, now)).toBe(true);
    expect(kopekSignatureValid(during, old, now)).toBe(true);
    expect(
      kopekSignatureValid({ ...during, headers: { 'kopek-signature': `t=${now},v1=${first}` } }, fresh, now),
    ).toBe(true);
    expect(
      kopekSignatureValid({ ...during, headers: { 'kopek-signature': `t=${now},v1=${second}` } }, old, now),
    ).toBe(true);

    await s.api.post('/test_clock/advance', { by: 'PT23H59M' });
    expect(v1Values(await resend(s, rx, id))).toHaveLength(2);
    await s.api.post('/test_clock/advance', { by: 'PT2M' });
    const after = await resend(s, rx, id);
    expect(v1Values(after)).toHaveLength(1);
    expect(kopekSignatureValid(after, fresh, await shopSeconds(s))).toBe(true);
    expect(kopekSignatureValid(after, old, await shopSeconds(s))).toBe(false);
    expect((await s.api.get('/shop')).body.webhook_secret_previous_until).toBeNull();
  });

  it('a new RSA key is shown pending, not used until confirmed, then used', async () => {
    const rx = await receiver();
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    await s.deliver();
    const id = (await s.api.get(`/notifications?resource_id=${sub}`)).body[0].id as string;
    const current = (await s.api.get('/shop')).body.public_key as string;

    const nothing = await s.api.post('/shop/signing_key/confirm');
    expect(nothing.status).toBe(422);
    expect(nothing.body).toEqual({
      message: expect.stringMatching(/^Pending public key can't be confirmed/),
      errors: { pending_public_key: [expect.stringContaining('rotate the signing key first')] },
    });

    const rotated = await s.api.post('/shop/signing_key/rotate');
    expect(rotated.status, rotated.text).toBe(200);
    const pending = rotated.body.pending_public_key as string;
    expect(pending).toContain('-----BEGIN PUBLIC KEY-----');
    expect(pending).not.toBe(current);
    expect(rotated.body.public_key).toBe(current);
    expect((await s.api.get('/shop')).body.pending_public_key).toBe(pending);

    const before = await resend(s, rx, id);
    expect(signatureValid(before, current)).toBe(true);
    expect(signatureValid(before, pending)).toBe(false);

    const confirmed = await s.api.post('/shop/signing_key/confirm');
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body).toMatchObject({ public_key: pending, pending_public_key: null });
    const after = await resend(s, rx, id);
    expect(signatureValid(after, pending)).toBe(true);
    expect(signatureValid(after, current)).toBe(false);
  });
});
