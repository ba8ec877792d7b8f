import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { type Config, ConfigError, loadConfig } from '../../src/config.js';
import type { Ctx } from '../../src/context.js';
import { ApiError } from '../../src/core/errors.js';
import { gatewayServiceSecret } from '../../src/crypto/service-credential.js';
import { GatewayTimeout, gatewayClient } from '../../src/gateway/client.js';
import { closeGatewayPools, GatewayHttpError, HttpGatewayClient } from '../../src/gateway/http-client.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { findShopRow, toShop } from '../../src/shops/repository.js';
import { createShop } from '../../src/shops/service.js';
import { type Harness, harness } from '../harness.js';
import { cardBody, card as subscriptionCard } from '../subscriptions/helpers.js';
import { card, order, rejection } from './helpers.js';
import { type GatewayProcess, passOnPage, startGatewayProcess } from './http-client-process.js';

/**
 * The HTTP gateway client against a real second Kopek process (the gateway deployment), as the API
 * deployment uses it: through gatewayClient(ctx) with GATEWAY_URL pointing there and GATEWAY_TOKEN.
 */

let h: Harness;
let gw: GatewayProcess;
let remote: Config;
let ctx: Ctx;
let api: App | undefined;

beforeAll(async () => {
  h = await harness();
  gw = await startGatewayProcess({ masterKey: h.masterKey.toString('hex'), threeDs: true });
  remote = loadConfig({
    PUBLIC_URL: 'http://api.kopek.test',
    GATEWAY_URL: gw.url,
    GATEWAY_TOKEN: gw.token,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
  });
  // The API deployment knows the shop too, in its own store.
  await createShop(h, { id: gw.shopId, secret: gw.secret, test: true, name: 'Remote' });
  const row = await findShopRow(h.db, gw.shopId);
  if (!row) throw new Error('the shop of the gateway process is missing from the API store');
  ctx = { ...h.app.services, config: remote, shop: toShop(row) };
  api = await buildApp({
    config: remote,
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    log: h.app.log,
  });
  await api.ready();
}, 120_000);

afterAll(async () => {
  await api?.close();
  await closeGatewayPools();
  await gw?.stop();
});

describe('gatewayClient(ctx) with GATEWAY_URL on another server', () => {
  it('is the HTTP client', () => {
    expect(gatewayClient(ctx)).toBeInstanceOf(HttpGatewayClient);
  });

  it('pays: successful and failed are results', async () => {
    const client = gatewayClient(ctx);
    const paid = await client.payment(order());
    expect(paid).toMatchObject({ status: 'successful', amount: 1500, type: 'payment', test: true });
    expect(paid.credit_card).toMatchObject({ last_4: '0000', brand: 'visa' });
    const declined = await client.payment(order({ credit_card: card('4005550000000019') }));
    expect(declined).toMatchObject({ status: 'failed', message: 'Payment was declined' });
  });

  it('authorizes and captures, refunds a payment, voids an authorization', async () => {
    const client = gatewayClient(ctx);
    const auth = await client.authorization(order());
    expect(auth.status).toBe('successful');
    const captured = await client.capture({ parent_uid: auth.uid, amount: 1000 });
    expect(captured).toMatchObject({
      status: 'successful',
      type: 'capture',
      parent_uid: auth.uid,
      amount: 1000,
    });
    const paid = await client.payment(order());
    const refunded = await client.refund({ parent_uid: paid.uid, amount: 500, reason: 'Returned' });
    expect(refunded).toMatchObject({ status: 'successful', type: 'refund', reason: 'Returned' });
    const other = await client.authorization(order());
    expect(await client.void({ parent_uid: other.uid })).toMatchObject({
      status: 'successful',
      type: 'void',
    });
  });

  it('tokenizes and pays by token; queries by uid and by tracking_id', async () => {
    const client = gatewayClient(ctx);
    const saved = await client.tokenize({
      number: '4200000000000000',
      holder: 'Ann',
      exp_month: '05',
      exp_year: '2031',
    });
    expect(saved).toMatchObject({ last_4: '0000', token: expect.any(String), stamp: expect.any(String) });
    const tracking_id = `remote-${randomUUID()}`;
    const paid = await client.payment(order({ tracking_id, credit_card: { token: saved.token } }));
    expect(paid).toMatchObject({ status: 'successful', credit_card: { token: saved.token } });
    expect(await client.query(paid.uid)).toEqual(paid);
    expect(await client.queryByTrackingId(tracking_id)).toEqual([paid]);
    expect(await client.query(randomUUID())).toBeUndefined();
    expect(await client.query('not a uid')).toBeUndefined();
    expect(await client.queryByTrackingId(`none-${randomUUID()}`)).toEqual([]);
  });

  it('rejects a refused request with ApiError carrying the gateway errors exactly', async () => {
    const bad = order({ amount: -1, credit_card: card('4200000000000001') });
    const err = await rejection(gatewayClient(ctx).payment(bad));
    const direct = await fetch(`${gw.url}/transactions/payments`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${gw.shopId}:${gw.secret}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ request: bad }),
    });
    expect(direct.status).toBe(422);
    const { response } = (await direct.json()) as { response: { message: string; errors: unknown } };
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 'validation',
      status: 422,
      errors: response.errors,
      message: response.message,
    });
    expect(response.errors).toMatchObject({ amount: expect.any(Array) });
  });

  it('rejects an unknown parent with ApiError not_found', async () => {
    const err = await rejection(gatewayClient(ctx).capture({ parent_uid: randomUUID(), amount: 100 }));
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('not_found');
  });

  it("turns the gateway's 504 into GatewayTimeout, and a query by tracking_id finds the charge", async () => {
    const client = gatewayClient(ctx);
    const tracking_id = `remote-${randomUUID()}`;
    const err = await rejection(
      client.payment(order({ tracking_id, credit_card: card(KOPEK_CARDS.timeout) })),
    );
    expect(err).toBeInstanceOf(GatewayTimeout);
    expect(err).toMatchObject({ trackingId: tracking_id, uid: expect.any(String) });
    const found = await client.queryByTrackingId(tracking_id);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ type: 'payment', status: 'pending', tracking_id });
    expect(found[0]?.uid).toBe((err as GatewayTimeout).uid);
  });

  it("answers incomplete with the gateway deployment's own /process page for a 3-D Secure card", async () => {
    const client = gatewayClient(ctx);
    const t = await client.payment(
      order({ credit_card: card('4012000000001097'), return_url: 'https://shop.example/r' }),
    );
    expect(t).toMatchObject({ status: 'incomplete', redirect_url: `${gw.url}/process/${t.uid}` });
    const page = await fetch(t.redirect_url as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Pass authentication');
    const done = await passOnPage(t.redirect_url as string);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`https://shop.example/r?uid=${t.uid}&status=successful`);
    expect(await client.query(t.uid)).toMatchObject({ status: 'successful' });
  });
});

describe('an Idempotency-Key sent to the gateway deployment', () => {
  it('makes a resend answer the first transaction, and the card is charged once', async () => {
    const client = gatewayClient(ctx);
    const request = order();
    const key = `kopek-charge:${request.tracking_id}`;
    const first = await client.payment(request, { idempotencyKey: key });
    expect(first.status).toBe('successful');
    // Without the key this resend would be a second payment (declined as a duplicate).
    const again = await client.payment(request, { idempotencyKey: key });
    expect(again).toEqual(first);
    expect(await client.queryByTrackingId(request.tracking_id as string)).toEqual([first]);
  });

  it("keeps the gateway's 504 under the key: a resend is the same GatewayTimeout, not a second charge", async () => {
    const client = gatewayClient(ctx);
    const request = order({ credit_card: card(KOPEK_CARDS.timeout) });
    const key = `kopek-charge:${request.tracking_id}`;
    const first = await rejection(client.payment(request, { idempotencyKey: key }));
    expect(first).toBeInstanceOf(GatewayTimeout);
    const uid = (first as GatewayTimeout).uid;
    expect(uid).toEqual(expect.any(String));
    const again = await rejection(client.payment(request, { idempotencyKey: key }));
    expect(again).toBeInstanceOf(GatewayTimeout);
    expect(again).toMatchObject({ uid, trackingId: request.tracking_id });
    // The pending transaction the 504 named was kept, and it is the only one.
    const found = await client.queryByTrackingId(request.tracking_id as string);
    expect(found.map((t) => [t.uid, t.status])).toEqual([[uid, 'pending']]);
  });

  it('answers a refusal sent with a key as a refusal, again on a resend', async () => {
    const client = gatewayClient(ctx);
    const bad = order({ amount: -1 });
    const key = `kopek-charge:${bad.tracking_id}`;
    const first = await rejection(client.payment(bad, { idempotencyKey: key }));
    const again = await rejection(client.payment(bad, { idempotencyKey: key }));
    expect(first).toBeInstanceOf(ApiError);
    expect(again).toBeInstanceOf(ApiError);
    expect(again).toMatchObject({ code: 'validation', errors: (first as ApiError).errors });
  });
});

describe('a subscription on the API deployment, charged by the gateway deployment', () => {
  it('is created with the card tokenized remotely, and settles after the remote 3-D Secure page', async () => {
    const auth = `Basic ${Buffer.from(`${gw.shopId}:${gw.secret}`).toString('base64')}`;
    const send = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      (api as App).inject({
        method,
        url,
        headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { payload: JSON.stringify(body) } : {}),
      });
    const created = await send(
      'POST',
      '/subscriptions',
      cardBody({ card: subscriptionCard('4012000000001097') }),
    );
    expect(created.statusCode).toBe(201);
    const sub = created.json();
    expect(sub).toMatchObject({ state: 'redirecting', last_transaction: { status: 'incomplete' } });
    expect(sub.last_transaction.redirect_url).toBe(`${gw.url}/process/${sub.last_transaction.uid}`);
    const done = await passOnPage(sub.last_transaction.redirect_url);
    expect(done.status).toBe(200);
    // With one store the gateway's page settles it; with two, this read asks the gateway over HTTP.
    const read = await send('GET', `/subscriptions/${sub.id}`);
    expect(read.json()).toMatchObject({
      state: 'active',
      paid_billing_cycles: 1,
      last_transaction: { uid: sub.last_transaction.uid, status: 'successful' },
    });
  });
});

describe('the gateway credential derived from GATEWAY_TOKEN', () => {
  const basic = (secret: string) => `Basic ${Buffer.from(`${gw.shopId}:${secret}`).toString('base64')}`;

  it("also works with the shop's own secret key", async () => {
    const own = new HttpGatewayClient({ url: gw.url, shopId: gw.shopId, secret: gw.secret });
    expect((await own.payment(order())).status).toBe('successful');
  });

  it('is refused with another token, as a configuration error rather than a result', async () => {
    const wrong = gatewayServiceSecret('0'.repeat(64), gw.shopId);
    const err = await rejection(
      new HttpGatewayClient({ url: gw.url, shopId: gw.shopId, secret: wrong }).payment(order()),
    );
    expect(err).toBeInstanceOf(GatewayHttpError);
    expect(err).toMatchObject({ status: 401, message: expect.stringMatching(/GATEWAY_TOKEN/) });
  });

  it('opens the card routes only, not the rest of the API', async () => {
    const credential = gatewayServiceSecret(gw.token, gw.shopId);
    const card = await fetch(`${gw.url}/v2/transactions/tracking_id/none`, {
      headers: { authorization: basic(credential) },
    });
    expect(card.status).toBe(200);
    const plans = await fetch(`${gw.url}/plans`, { headers: { authorization: basic(credential) } });
    expect(plans.status).toBe(401);
    const ownKey = await fetch(`${gw.url}/plans`, { headers: { authorization: basic(gw.secret) } });
    expect(ownKey.status).toBe(200);
    // Another shop's id with this shop's credential is refused: each credential names one shop.
    const other = await fetch(`${gw.url}/v2/transactions/tracking_id/none`, {
      headers: { authorization: `Basic ${Buffer.from(`${gw.shopId + 1}:${credential}`).toString('base64')}` },
    });
    expect(other.status).toBe(401);
  });

  it('is required by the configuration when GATEWAY_URL names another server', () => {
    const env = { PUBLIC_URL: 'http://a.example', GATEWAY_URL: 'http://b.example' };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/GATEWAY_TOKEN is required when GATEWAY_URL names another server/);
    expect(() => loadConfig({ ...env, GATEWAY_TOKEN: 'short' })).toThrow(
      /GATEWAY_TOKEN must be 64 hexadecimal/,
    );
    expect(loadConfig({ ...env, GATEWAY_TOKEN: 'AB'.repeat(32) }).gatewayToken).toBe('ab'.repeat(32));
  });
});
