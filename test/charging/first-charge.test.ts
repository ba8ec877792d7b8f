import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import type { Ctx } from '../../src/context.js';
import { ALREADY_VOIDED, gatewayClient } from '../../src/gateway/client.js';
import { closeGatewayPools } from '../../src/gateway/http-client.js';
import { findShopRow, toShop } from '../../src/shops/repository.js';
import { createShop } from '../../src/shops/service.js';
import { goodCard, openPage, postForm } from '../checkout/forms.js';
import { type GatewayProcess, passOnPage, startGatewayProcess } from '../gateway/http-client-process.js';
import { type Harness, harness, newShop } from '../harness.js';
import { cardBody, customer, monthly, card as subscriptionCard } from '../subscriptions/helpers.js';

/**
 * Every way a subscription's first charge is taken — a full card, a card token, the hosted payment
 * page of a redirect subscription, a 3-D Secure step finished by the cardholder — with the gateway in
 * this process and with the gateway in another process over HTTP. Whatever the path, the charge
 * goes through the one charging module: exactly one payment at the gateway under the attempt's
 * tracking id `sbs_…-1`, exactly one charge record naming that payment, and the subscription active
 * with the events of a paid first charge.
 */

interface Deployment {
  name: string;
  app: App;
  auth: string;
  /** The gateway as the API deployment reaches it, for the shop. */
  gateway: Ctx;
  /** Completes a 3-D Secure step as the cardholder would, passing it. */
  passThreeDs(redirectUrl: string, uid: string): Promise<void>;
}

let h: Harness;
let gw: GatewayProcess;
let remoteApp: App | undefined;
const deployments: Deployment[] = [];

beforeAll(async () => {
  h = await harness();
  const local = await newShop(h, { threeDs: true });
  const localCtx: Ctx = { ...h.app.services, shop: local.shop };
  deployments.push({
    name: 'in process',
    app: h.app,
    auth: local.auth,
    gateway: localCtx,
    async passThreeDs(_url, uid) {
      const res = await h.app.inject({
        method: 'POST',
        url: `/process/${uid}/return`,
        headers: { authorization: local.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ outcome: 'passed' }),
      });
      expect(res.statusCode).toBe(200);
    },
  });

  gw = await startGatewayProcess({ masterKey: h.masterKey.toString('hex'), threeDs: true });
  const remote = loadConfig({
    PUBLIC_URL: 'http://api.kopek.test',
    CHECKOUT_URL: 'http://checkout.kopek.test',
    GATEWAY_URL: gw.url,
    GATEWAY_TOKEN: gw.token,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
  });
  // The API deployment knows the shop too, in its own store.
  await createShop(h, { id: gw.shopId, secret: gw.secret, test: true, threeDs: true, name: 'Remote' });
  const row = await findShopRow(h.db, gw.shopId);
  if (!row) throw new Error('the shop of the gateway process is missing from the API store');
  remoteApp = await buildApp({
    config: remote,
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    log: h.app.log,
  });
  await remoteApp.ready();
  deployments.push({
    name: 'over HTTP',
    app: remoteApp,
    auth: `Basic ${Buffer.from(`${gw.shopId}:${gw.secret}`).toString('base64')}`,
    gateway: { ...h.app.services, config: remote, shop: toShop(row) },
    async passThreeDs(url) {
      expect((await passOnPage(url)).status).toBe(200);
    },
  });
}, 120_000);

afterAll(async () => {
  await remoteApp?.close();
  await closeGatewayPools();
  await gw?.stop();
});

async function send(d: Deployment, method: 'GET' | 'POST', url: string, body?: unknown) {
  const res = await d.app.inject({
    method,
    url,
    headers: { authorization: d.auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, body: res.json() };
}

/** Pays the hosted page of a redirect subscription as a buyer's browser does (CSRF cookie and token). */
async function payPage(d: Deployment, token: string, number: string): Promise<void> {
  const page = await openPage(d, token);
  expect(page.status).toBe(200);
  expect((await postForm(d, page, token, goodCard(number))).status).toBe(303);
}

/** The one payment, the one charge record and the state and events of a paid first charge. */
async function expectChargedOnce(d: Deployment, id: string): Promise<void> {
  const payments = (await gatewayClient(d.gateway).queryByTrackingId(`${id}-1`)).filter(
    (t) => t.type === 'payment',
  );
  expect(payments).toHaveLength(1);
  expect(payments[0]).toMatchObject({ status: 'successful', amount: 1999, currency: 'EUR' });
  // A read settles a charge whose 3-D Secure step ended on another deployment's page.
  const read = await send(d, 'GET', `/subscriptions/${id}`);
  expect(read.body).toMatchObject({
    state: 'active',
    paid_billing_cycles: 1,
    last_transaction: { uid: payments[0]?.uid, status: 'successful' },
  });
  const charges = await h.db.query(
    'SELECT period, attempt, status, transaction_uid FROM subscription_charges WHERE subscription_id = $1',
    [id],
  );
  expect(charges).toEqual([
    { period: 1, attempt: 1, status: 'successful', transaction_uid: payments[0]?.uid },
  ]);
  const events = await h.db.query<{ event: string }>(
    "SELECT event FROM events WHERE resource_type = 'subscription' AND resource_id = $1 ORDER BY id",
    [id],
  );
  expect(events.map((e) => e.event)).toEqual(['created.subscription', 'activated.subscription']);
}

const paths: [string, (d: Deployment) => Promise<string>][] = [
  [
    'a full card',
    async (d) => {
      const created = await send(d, 'POST', '/subscriptions', cardBody());
      expect(created.status).toBe(201);
      expect(created.body.state).toBe('active');
      return created.body.id;
    },
  ],
  [
    'a card token',
    async (d) => {
      const saved = await gatewayClient(d.gateway).tokenize({
        number: '4200000000000000',
        holder: 'JANE DOE',
        exp_month: '12',
        exp_year: '2030',
      });
      const body = cardBody({ card: { token: saved.token, verification_value: '123' } });
      const created = await send(d, 'POST', '/subscriptions', body);
      expect(created.status).toBe(201);
      expect(created.body.state).toBe('active');
      return created.body.id;
    },
  ],
  [
    'the hosted payment page',
    async (d) => {
      const created = await send(d, 'POST', '/subscriptions', { plan: monthly(), customer: customer() });
      expect(created.body.state).toBe('redirecting');
      await payPage(d, created.body.token, '4200000000000000');
      return created.body.id;
    },
  ],
  [
    'a 3-D Secure step the cardholder passes',
    async (d) => {
      const body = cardBody({ card: subscriptionCard('4012000000001097') });
      const created = await send(d, 'POST', '/subscriptions', body);
      expect(created.body).toMatchObject({
        state: 'redirecting',
        last_transaction: { status: 'incomplete' },
      });
      const uid = created.body.last_transaction.uid as string;
      await d.passThreeDs(created.body.last_transaction.redirect_url, uid);
      return created.body.id;
    },
  ],
];

describe('the first charge goes through the one charging module on every path', () => {
  for (const where of ['in process', 'over HTTP']) {
    describe(`with the gateway ${where}`, () => {
      it.each(paths)('%s: one payment, one charge record, active', async (_name, pay) => {
        const d = deployments.find((x) => x.name === where) as Deployment;
        const id = await pay(d);
        await expectChargedOnce(d, id);
      });

      it('a free trial verifies the card through 3-D Secure: one authorization, released, in trial', async () => {
        const d = deployments.find((x) => x.name === where) as Deployment;
        const plan = monthly({ trial: { amount: 0, interval: 7, interval_unit: 'day' } });
        const created = await send(
          d,
          'POST',
          '/subscriptions',
          cardBody({ plan, card: subscriptionCard('4012000000001097') }),
        );
        expect(created.body).toMatchObject({
          state: 'redirecting',
          last_transaction: { status: 'incomplete' },
        });
        const uid = created.body.last_transaction.uid as string;
        await d.passThreeDs(created.body.last_transaction.redirect_url, uid);
        const read = await send(d, 'GET', `/subscriptions/${created.body.id}`);
        expect(read.body).toMatchObject({
          state: 'trial',
          paid_billing_cycles: 0,
          last_transaction: { uid },
        });
        const gateway = gatewayClient(d.gateway);
        const found = await gateway.queryByTrackingId(`${created.body.id}-0`);
        expect(found.map((t) => [t.type, t.status, t.amount])).toEqual([['authorization', 'successful', 1]]);
        // Released already: the gateway refuses a second void of it.
        await expect(gateway.void({ parent_uid: uid })).rejects.toMatchObject({
          errors: { base: [ALREADY_VOIDED] },
        });
        const charges = await h.db.query(
          'SELECT period, status FROM subscription_charges WHERE subscription_id = $1',
          [created.body.id],
        );
        expect(charges).toEqual([{ period: 0, status: 'successful' }]);
      });
    });
  }
});
