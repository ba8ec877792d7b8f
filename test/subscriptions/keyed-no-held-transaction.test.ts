import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { closeGatewayPools } from '../../src/gateway/http-client.js';
import { createShop } from '../../src/shops/service.js';
import { type BillStore, forward, startGateway } from '../billing/bill-store.js';
import { cleanUp } from '../foundation/kopek-process.js';
import { freshPostgres } from '../fresh-store.js';
import { card, cardBody } from './helpers.js';

/**
 * No keyed request holds a database transaction open across a call to the gateway (redesign plan,
 * recovery points). The gateway is another process on the same store, reached over HTTP through a
 * proxy that stalls on demand: while each keyed route waits for the stalled gateway, no connection
 * of the store is `idle in transaction`. PostgreSQL only: the embedded store has no other sessions.
 */

const pgUrl = process.env.DATABASE_URL;
const CHALLENGE = '4012000000001097';

interface Stall {
  url: string;
  /** Holds every request from now on until `release`; resolves once one is held. */
  arm(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function stallingProxy(target: string): Promise<Stall> {
  let armed = false;
  let onHeld: () => void = () => {};
  let release: () => void = () => {};
  let released: Promise<void> = Promise.resolve();
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (armed) {
      onHeld();
      await released;
    }
    await forward(target, req, chunks, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    arm() {
      armed = true;
      released = new Promise<void>((r) => {
        release = r;
      });
      return new Promise<void>((r) => {
        onHeld = r;
      });
    },
    release() {
      armed = false;
      release();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let store: BillStore | undefined;
let proxy: Stall | undefined;
let app: App | undefined;
let auth = '';

beforeAll(async () => {
  if (!pgUrl) return;
  const { db, url, close } = await freshPostgres({}, 6);
  const masterKey = randomBytes(32).toString('hex');
  const { shop, secret } = await createShop(
    { db, clock: systemClock, masterKey: Buffer.from(masterKey, 'hex') },
    { name: 'Keyed', test: true, threeDs: true },
  );
  auth = `Basic ${Buffer.from(`${shop.id}:${secret}`).toString('base64')}`;
  store = { db, url: url as string, masterKey, shopId: shop.id, drop: close };
  // Stopped by cleanUp, with every process this file started.
  const started = await startGateway(store);
  proxy = await stallingProxy(started.env.GATEWAY_URL as string);
  app = await buildApp({
    config: loadConfig({
      PUBLIC_URL: 'http://api.kopek.test',
      CHECKOUT_URL: 'http://checkout.kopek.test',
      GATEWAY_URL: proxy.url,
      GATEWAY_TOKEN: started.env.GATEWAY_TOKEN,
      KOPEK_MASTER_KEY: masterKey,
      LOG_LEVEL: 'warn',
    }),
    db,
    clock: systemClock,
    masterKey: Buffer.from(masterKey, 'hex'),
  });
  await app.ready();
}, 120_000);

afterAll(async () => {
  await app?.close();
  await closeGatewayPools();
  await proxy?.close();
  cleanUp();
  await store?.drop();
});

const send = (url: string, body: unknown, key?: string) =>
  (app as App).inject({
    method: 'POST',
    url,
    headers: {
      authorization: auth,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    payload: JSON.stringify(body),
  });

/** Sessions of the store left inside a transaction while their owner waits for something else. */
async function idleInTransaction(): Promise<string[]> {
  const rows = await (store as BillStore).db.query<{ q: string }>(
    `SELECT left(query, 120) AS q FROM pg_stat_activity
     WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`,
  );
  return rows.map((r) => r.q);
}

/** Sends a keyed request while the gateway stalls, and looks at the store meanwhile. */
async function whileGatewayStalls(url: string, body: unknown, key: string) {
  const held = (proxy as Stall).arm();
  const answer = send(url, body, key);
  await held;
  // The request now waits for the gateway: long enough for a held transaction to show.
  await new Promise((r) => setTimeout(r, 200));
  const idle = await idleInTransaction();
  (proxy as Stall).release();
  const res = await answer;
  return { idle, res };
}

describe.skipIf(!pgUrl)('keyed requests while the gateway over HTTP stalls', () => {
  it('POST /subscriptions holds no transaction', async () => {
    const { idle, res } = await whileGatewayStalls('/subscriptions', cardBody(), 'create-1');
    expect(res.statusCode, res.body).toBe(201);
    expect(idle).toEqual([]);
  });

  it('POST /subscriptions/{id}/cancel holds no transaction', async () => {
    const created = await send('/subscriptions', cardBody({ card: card(CHALLENGE) }));
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const { idle, res } = await whileGatewayStalls(
      `/subscriptions/${id}/cancel`,
      { cancel_reason: 'No' },
      'c-1',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ state: 'canceled', last_transaction: { status: 'failed' } });
    expect(idle).toEqual([]);
    // A retry answers the same, and nothing is sent twice.
    const again = await send(`/subscriptions/${id}/cancel`, { cancel_reason: 'No' }, 'c-1');
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(res.body);
  });

  it('POST /process/{uid}/return holds no transaction', async () => {
    const created = await send('/subscriptions', cardBody({ card: card(CHALLENGE) }));
    expect(created.statusCode, created.body).toBe(201);
    const uid = created.json().last_transaction.uid as string;
    const { idle, res } = await whileGatewayStalls(`/process/${uid}/return`, { outcome: 'passed' }, 'r-1');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().transaction).toMatchObject({ uid, status: 'successful' });
    expect(idle).toEqual([]);
  });

  it('POST /test_clock/advance holds no transaction', async () => {
    const created = await send('/subscriptions', cardBody());
    expect(created.statusCode, created.body).toBe(201);
    const { idle, res } = await whileGatewayStalls('/test_clock/advance', { by: 'P1M' }, 'a-1');
    expect(res.statusCode, res.body).toBe(200);
    const billing = res.json().billing;
    expect(billing.charged).toBeGreaterThan(0);
    expect(billing.successful).toBe(billing.charged);
    expect(idle).toEqual([]);
  });
});
