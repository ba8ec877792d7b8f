import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pemBody } from '../../../src/shops/settings.js';
import { client, harness, newShop } from '../../harness.js';

/**
 * Kopek's widget script and its public-key integration (docs/embedding.md), in process. The script
 * itself runs in Chromium in test/browser/embedding.browser.test.ts.
 */

function freshKeys() {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

const checkout = (publicKey: string, extra: Record<string, unknown> = {}) => ({
  checkout: {
    iframe: true,
    test: true,
    transaction_type: 'payment',
    public_key: publicKey,
    order: { amount: 100, currency: 'EUR', description: 'Payment description', tracking_id: 'my_id' },
    settings: { success_url: 'https://shop.example/ok' },
    ...extra,
  },
});

describe("Kopek's widget script", () => {
  it('is served to any site, cached long when versioned, with the SRI hash its JSON names', async () => {
    const h = await harness();
    const meta = await h.app.inject({ method: 'GET', url: '/widget/be_gateway.json' });
    expect(meta.statusCode).toBe(200);
    const { src, integrity } = meta.json();
    expect(src).toMatch(/^http:\/\/checkout\.kopek\.test\/widget\/be_gateway\.js\?v=[0-9a-f]{12}$/);
    const versioned = await h.app.inject({ method: 'GET', url: new URL(src).pathname + new URL(src).search });
    expect(versioned.statusCode).toBe(200);
    expect(versioned.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(versioned.headers['access-control-allow-origin']).toBe('*');
    const digest = `sha384-${createHash('sha384').update(versioned.rawPayload).digest('base64')}`;
    expect(integrity).toBe(digest);
    expect(versioned.body).toContain('BeGateway.prototype.createWidget');
    const bare = await h.app.inject({ method: 'GET', url: '/widget/be_gateway.js' });
    expect(bare.headers['cache-control']).toBe('public, max-age=86400');
    expect(bare.body).toBe(versioned.body);
    // Small, no framework.
    expect(versioned.rawPayload.length).toBeLessThan(8 * 1024);
  });
});

describe('the public-key integration', () => {
  it('makes a checkout for the shop whose public key it names, without credentials', async () => {
    const h = await harness();
    const keys = freshKeys();
    const shop = await newShop(h, { signingKeys: keys });
    const preflight = await h.app.inject({
      method: 'OPTIONS',
      url: '/widget/checkouts',
      headers: { origin: 'http://127.0.0.2:8080', 'access-control-request-method': 'POST' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-headers']).toContain('content-type');
    expect(preflight.headers['access-control-allow-headers']).not.toContain('authorization');

    const made = await h.app.inject({
      method: 'POST',
      url: '/widget/checkouts',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.2:8080' },
      payload: checkout(pemBody(keys.publicKey)),
    });
    expect(made.statusCode).toBe(201);
    expect(made.headers['access-control-allow-origin']).toBe('*');
    const { token, redirect_url } = made.json().checkout;
    expect(redirect_url).toBe(`http://checkout.kopek.test/widget/hpp.html?token=${token}`);
    // The shop's own checkout, as the API reads it.
    const got = await client(h, shop).get(`/ctp/api/checkouts/${token}`);
    expect(got.status).toBe(200);
    expect(got.body.checkout).toMatchObject({
      test: true,
      order: { amount: 100, currency: 'EUR', tracking_id: 'my_id' },
    });
    // The page opened with iframe: true is laid out for the frame.
    const page = await h.app.inject({ method: 'GET', url: `/widget/hpp.html?token=${token}` });
    expect(page.body).toContain('class="hosted framed"');
  });

  it('refuses a blank or unknown key, a bad body, and a page not among the shop frame_origins', async () => {
    const h = await harness();
    const keys = freshKeys();
    const shop = await newShop(h, { signingKeys: keys });
    const post = (payload: unknown, origin = 'https://shop.example') =>
      h.app.inject({
        method: 'POST',
        url: '/widget/checkouts',
        headers: { 'content-type': 'application/json', origin },
        payload: payload as object,
      });
    const blank = await post(checkout(''));
    expect(blank.statusCode).toBe(422);
    expect(blank.json().response.errors.checkout.public_key).toBeDefined();
    const unknown = await post(checkout(pemBody(freshKeys().publicKey)));
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json().response.message).toBe('Invalid public key.');
    const bad = await post(checkout(pemBody(keys.publicKey), { order: { amount: -1, currency: 'EUR' } }));
    expect(bad.statusCode).toBe(422);
    expect(bad.json().response.errors.checkout.order.amount).toBeDefined();
    await client(h, shop).send('PATCH', '/shop', { frame_origins: ['https://shop.example'] });
    expect((await post(checkout(pemBody(keys.publicKey)))).statusCode).toBe(201);
    const elsewhere = await post(checkout(pemBody(keys.publicKey)), 'https://evil.example');
    expect(elsewhere.statusCode).toBe(403);
  });
});
