import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Ctx, KeyedRequest } from '../../src/context.js';
import { holdTransaction } from '../../src/db/held.js';
import { gatewayClient, InProcessGatewayClient, RemoteCallInTransaction } from '../../src/gateway/client.js';
import { HttpGatewayClient } from '../../src/gateway/http-client.js';
import { ctxOf } from '../../src/http/ctx.js';
import { type Harness, harness, newShop } from '../harness.js';

/**
 * By construction, no remote gateway call runs inside a transaction: asked for a client to a gateway
 * on another server while its store is a transaction view (dbWithin), gatewayClient refuses. On by
 * default for keyed requests in the phased mode; asked for explicitly elsewhere, because the atomic
 * mode still calls a remote gateway from its held transaction (POST /subscriptions, until 8b).
 */

let h: Harness;
let remote: Config;
let app: App;

const keyed: KeyedRequest = {
  point: 'started',
  resource: null,
  advance: () => ({ sql: 'SELECT 1' }),
};

beforeAll(async () => {
  h = await harness();
  remote = loadConfig({
    PUBLIC_URL: 'http://api.kopek.test',
    // Never called: the refusal comes before any request.
    GATEWAY_URL: 'http://gateway.kopek.test',
    GATEWAY_TOKEN: 'ab'.repeat(32),
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
  });
  app = await buildApp({
    config: remote,
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    log: pino({ level: 'silent' }) as FastifyBaseLogger,
  });
  // A phased verb that (wrongly) opens a transaction and asks for the gateway inside it.
  app.post('/phased-charge-in-tx', { config: { idempotency: 'phased' } }, async (request, reply) => {
    const ctx = ctxOf(request);
    const held = await holdTransaction(ctx.db);
    try {
      gatewayClient({ ...ctx, db: held.db });
      return reply.code(200).send({ refused: false });
    } catch (err) {
      return reply.code(200).send({ refused: err instanceof RemoteCallInTransaction });
    } finally {
      await held.end(false);
    }
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
});

async function remoteCtx(): Promise<Ctx> {
  const { shop } = await newShop(h);
  return { ...h.app.services, config: remote, shop };
}

describe('a remote gateway client and transactions', () => {
  it('is refused inside a transaction view when asked to stay outside', async () => {
    const ctx = await remoteCtx();
    const held = await holdTransaction(ctx.db);
    try {
      expect(() => gatewayClient({ ...ctx, db: held.db }, { outsideTransaction: true })).toThrow(
        RemoteCallInTransaction,
      );
    } finally {
      await held.end(false);
    }
    // Outside a transaction the same request is granted.
    expect(gatewayClient(ctx, { outsideTransaction: true })).toBeInstanceOf(HttpGatewayClient);
  });

  it('is refused by default for a keyed request in the phased mode', async () => {
    const ctx = await remoteCtx();
    const held = await holdTransaction(ctx.db);
    try {
      expect(() => gatewayClient({ ...ctx, db: held.db, keyed })).toThrow(RemoteCallInTransaction);
    } finally {
      await held.end(false);
    }
    expect(gatewayClient({ ...ctx, keyed })).toBeInstanceOf(HttpGatewayClient);
  });

  it('is refused on a phased route whose verb opened a transaction', async () => {
    const { auth } = await newShop(h);
    const res = await app.inject({
      method: 'POST',
      url: '/phased-charge-in-tx',
      headers: { authorization: auth, 'content-type': 'application/json', 'idempotency-key': 'guard-1' },
      payload: '{}',
    });
    expect(res.json()).toEqual({ refused: true });
  });

  it("is still made inside the atomic mode's held transaction, as today's keyed routes need", async () => {
    const ctx = await remoteCtx();
    const held = await holdTransaction(ctx.db);
    try {
      expect(gatewayClient({ ...ctx, db: held.db })).toBeInstanceOf(HttpGatewayClient);
    } finally {
      await held.end(false);
    }
  });

  it('never refuses the in-process gateway, which makes no call out of the process', async () => {
    const ctx = await remoteCtx();
    const held = await holdTransaction(ctx.db);
    try {
      const local = { ...ctx, config: h.config, db: held.db, keyed };
      expect(gatewayClient(local, { outsideTransaction: true })).toBeInstanceOf(InProcessGatewayClient);
    } finally {
      await held.end(false);
    }
  });
});
