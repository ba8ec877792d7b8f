import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ApiError } from '../../src/core/errors.js';
import { gatewayClient, InProcessGatewayClient } from '../../src/gateway/client.js';
import { HttpGatewayClient } from '../../src/gateway/http-client.js';
import { harness } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const ctxOf = (g: GatewayShop) => ({ ...g.h.app.services, shop: g.shop.shop });
const order = (extra: Record<string, unknown> = {}) => ({
  amount: 1200,
  currency: 'USD',
  description: 'Plan renewal',
  tracking_id: `sbs-${Math.random().toString(36).slice(2)}`,
  credit_card: card(),
  ...extra,
});

describe('the in-process gateway client', () => {
  it('is the default client', async () => {
    const g = await gatewayShop();
    expect(gatewayClient(ctxOf(g))).toBeInstanceOf(InProcessGatewayClient);
  });

  it('goes over HTTP when GATEWAY_URL names another server', async () => {
    const g = await gatewayShop();
    const config = loadConfig({
      PUBLIC_URL: 'http://a.example',
      GATEWAY_URL: 'http://b.example',
      KOPEK_MASTER_KEY: 'a'.repeat(64),
      GATEWAY_TOKEN: 'b'.repeat(64),
    });
    expect(gatewayClient({ ...ctxOf(g), config })).toBeInstanceOf(HttpGatewayClient);
  });

  it('tokenizes, pays by token, and finds the payment by uid and by tracking_id', async () => {
    const g = await gatewayShop();
    const client = gatewayClient(ctxOf(g));
    const saved = await client.tokenize({
      number: '4200000000000000',
      holder: 'Ann',
      exp_month: '05',
      exp_year: '2031',
    });
    const tracking_id = 'sbs-renewal-1';
    const paid = await client.payment(order({ tracking_id, credit_card: { token: saved.token } }));
    expect(paid).toMatchObject({
      status: 'successful',
      credit_card: { token: saved.token, stamp: saved.stamp },
    });
    expect(await client.query(paid.uid)).toEqual(paid);
    expect(await client.queryByTrackingId(tracking_id)).toEqual([paid]);
    expect(await client.query('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect(await client.queryByTrackingId('none')).toEqual([]);
  });

  it('authorizes, captures, refunds and voids', async () => {
    const g = await gatewayShop();
    const client = gatewayClient(ctxOf(g));
    const auth = await client.authorization(order());
    const captured = await client.capture({ parent_uid: auth.uid, amount: 1200 });
    expect(captured).toMatchObject({ type: 'capture', status: 'successful', parent_uid: auth.uid });
    const refunded = await client.refund({ parent_uid: captured.uid, amount: 200, reason: 'Partial' });
    expect(refunded).toMatchObject({ type: 'refund', status: 'successful', reason: 'Partial' });
    const other = await client.authorization(order());
    expect(await client.void({ parent_uid: other.uid })).toMatchObject({ type: 'void', amount: 1200 });
    expect(
      await client.credit({ ...order(), credit_card: { token: auth.credit_card?.token } }),
    ).toMatchObject({
      type: 'credit',
      status: 'successful',
    });
  });

  it('rejects invalid requests with ApiError carrying the protocol field errors, and unknown parents as not found', async () => {
    const g = await gatewayShop();
    const client = gatewayClient(ctxOf(g));
    const bad = await client
      .payment(order({ credit_card: card('4200000000000001') }))
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect((bad as ApiError).status).toBe(422);
    expect((bad as ApiError).errors).toEqual({ credit_card: { number: ['is not a card number'] } });
    const missing = await client
      .refund({ parent_uid: '00000000-0000-4000-8000-000000000000', amount: 1, reason: 'x' })
      .catch((e: unknown) => e);
    expect((missing as ApiError).code).toBe('not_found');
  });

  it('resolves declined and incomplete charges: the caller reads the status', async () => {
    const g = await gatewayShop({ threeDs: true });
    const client = gatewayClient(ctxOf(g));
    expect((await client.payment(order({ credit_card: card('4005550000000019') }))).status).toBe('failed');
    const pending = await client.payment(order({ credit_card: card('4012000000001097') }));
    expect(pending.status).toBe('incomplete');
    expect(pending.redirect_url).toMatch(/\/process\//);
  });
});
