import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createShop } from '../../src/shops/service.js';
import { type BillStore, kopekEnv, startGateway } from '../billing/bill-store.js';
import { KillingProxy } from '../foundation/killing-proxy.js';
import { cleanUp, freePort, KOPEK, type Started, start, waitForBanner } from '../foundation/kopek-process.js';
import { freshPostgres } from '../fresh-store.js';
import { cardBody } from './helpers.js';

/**
 * Redesign item 5 (recovery points): a card subscription created with an Idempotency-Key, with the
 * gateway in another process over HTTP. The API process is killed (SIGKILL) right after the gateway
 * answered its payment and before Kopek could record the answer; after a restart the client retries
 * with the same key. The gateway must have charged exactly once, the retry must answer 201 with the
 * one subscription, and a second retry must answer the same bytes. PostgreSQL only: the gateway
 * process and the API share its store, as two deployments of one operator may.
 */

const pgUrl = process.env.DATABASE_URL;
const stores: BillStore[] = [];

afterEach(() => cleanUp());
afterAll(async () => {
  cleanUp();
  for (const s of stores) await s.drop();
});

const BODY = JSON.stringify(cardBody({ tracking_id: 'crash-remote-1' }));

describe.skipIf(!pgUrl)(
  'a keyed create over an HTTP gateway, killed between the charge and its record',
  () => {
    it('resumes on retry: one payment at the gateway, one subscription, the same answer every time', async () => {
      const { db, url, close } = await freshPostgres({}, 2);
      const masterKey = randomBytes(32).toString('hex');
      const { shop, secret } = await createShop(
        { db, clock: systemClock, masterKey: Buffer.from(masterKey, 'hex') },
        { name: 'Crash', test: true },
      );
      const store: BillStore = { db, url: url as string, masterKey, shopId: shop.id, drop: close };
      stores.push(store);
      const gateway = await startGateway(store);
      const proxy = new KillingProxy(new URL(gateway.env.GATEWAY_URL as string));
      const proxyUrl = await proxy.listen();
      const port = await freePort();
      const serve = (): Started =>
        start(
          process.execPath,
          [...KOPEK, 'serve'],
          kopekEnv(store, {
            PORT: String(port),
            HOST: '127.0.0.1',
            PUBLIC_URL: `http://127.0.0.1:${port}`,
            GATEWAY_URL: proxyUrl,
            GATEWAY_TOKEN: gateway.env.GATEWAY_TOKEN,
            BILLING: 'off',
          }),
        );
      const post = () =>
        fetch(`http://127.0.0.1:${port}/subscriptions`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${shop.id}:${secret}`).toString('base64')}`,
            'content-type': 'application/json',
            'idempotency-key': 'crash-remote-key',
          },
          body: BODY,
        });
      const paymentsAtGateway = async () =>
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM transactions
           WHERE shop_id = $1 AND type = 'payment' AND status = 'successful'`,
            [shop.id],
          )
        )[0]?.n;

      try {
        const api = serve();
        await waitForBanner(api);
        proxy.killOnNextPayment(api.child);
        const lost = await post().then(
          (res) => `answered ${res.status}`,
          () => 'no answer',
        );
        expect(lost).toBe('no answer');
        expect((await api.exited).signal).toBe('SIGKILL');

        // The gateway charged; Kopek holds the subscription and its claimed charge, not the answer.
        expect(await paymentsAtGateway()).toBe(1);
        const [claimed] = await db.query<{ id: string; state: string; status: string }>(
          `SELECT s.id, s.state, c.status FROM subscriptions s
         JOIN subscription_charges c ON c.subscription_id = s.id
         WHERE s.shop_id = $1 AND s.tracking_id = 'crash-remote-1'`,
          [shop.id],
        );
        expect(claimed).toMatchObject({ state: 'processing', status: 'pending' });

        const again = serve();
        await waitForBanner(again);
        const retry = await post();
        const text = await retry.text();
        expect(retry.status, text).toBe(201);
        const answer = JSON.parse(text) as { id: string; state: string };
        expect(answer).toMatchObject({ id: claimed?.id, state: 'active' });
        const replay = await post();
        expect(replay.status).toBe(201);
        expect(await replay.text()).toBe(text);

        // The retry asked the gateway before sending anything: one payment request ever went out, one
        // payment is in the gateway's books, and one subscription exists for the request.
        expect(proxy.payments).toBe(1);
        expect(await paymentsAtGateway()).toBe(1);
        const subs = await db.query('SELECT id FROM subscriptions WHERE shop_id = $1', [shop.id]);
        expect(subs).toHaveLength(1);
        const charges = await db.query<{ status: string }>(
          'SELECT status FROM subscription_charges WHERE subscription_id = $1',
          [claimed?.id],
        );
        expect(charges).toEqual([expect.objectContaining({ status: 'successful' })]);
      } finally {
        await proxy.close();
      }
    });
  },
);
