import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { ManualClock } from '../src/clock.js';
import { type App, buildApp } from '../src/compose/app.js';
import { buildServices } from '../src/compose/services.js';
import { type Config, loadConfig } from '../src/config.js';
import type { Db } from '../src/db/db.js';
import { createPostgresDb } from '../src/db/postgres.js';
import { pinoOptions } from '../src/http/logger.js';
import type { Shop } from '../src/shops/repository.js';
import { type CreateShopInput, createShop } from '../src/shops/service.js';
import { freshPglite, sharedStoreUrl } from './fresh-store.js';
import { type FakeNet, fakeNet } from './net/fake-net.js';
import { pooledSigningKeys, shopSigningKeys } from './signing-keys.js';

export interface Harness {
  app: App;
  db: Db;
  clock: ManualClock;
  config: Config;
  masterKey: Buffer;
  /** Every log line the app wrote, as raw JSON text: tests assert that secrets never appear. */
  logs: string[];
  /** The network the app's notifications use: names from a table, connections to loopback only. */
  net: FakeNet;
}

export const TEST_PUBLIC_URL = 'http://kopek.test';
/** METRICS_TOKEN of the shared app: /metrics answers only with `Authorization: Bearer` and this. */
export const TEST_METRICS_TOKEN = 'test-metrics-token-'.padEnd(40, '0');

let shared: Promise<Harness> | undefined;

/** The store and app shared by the test files of one worker. */
export function harness(): Promise<Harness> {
  shared ??= start();
  return shared;
}

/**
 * On PostgreSQL, a pool on the run's shared store; on the embedded store, a new in-memory store.
 * Either is migrated already (copied from the run's templates).
 */
export async function openTestDb(): Promise<Db> {
  const url = sharedStoreUrl();
  if (!url) return freshPglite();
  return createPostgresDb(url, 10);
}

async function start(): Promise<Harness> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino(pinoOptions('debug'), sink);
  const masterKey = randomBytes(32);
  const config = loadConfig({
    PUBLIC_URL: TEST_PUBLIC_URL,
    CHECKOUT_URL: 'http://checkout.kopek.test',
    GATEWAY_URL: TEST_PUBLIC_URL,
    KOPEK_MASTER_KEY: masterKey.toString('hex'),
    LOG_LEVEL: 'debug',
    // Test shops notify receivers on loopback; on PostgreSQL (not the embedded store) only the
    // operator's list lets them. Tests of the address rules give their own settings.
    KOPEK_OUTBOUND_ALLOW: '127.0.0.1/32,::1/128',
    METRICS_TOKEN: TEST_METRICS_TOKEN,
  });
  const db = await openTestDb();
  const clock = new ManualClock();
  const net = fakeNet();
  const { services } = await buildServices(config, {
    db,
    // The shared PostgreSQL store holds every worker's values, each under the worker's own key.
    keyCheck: sharedStoreUrl() === undefined,
    clock,
    masterKey,
    outbound: net,
    log: logger as FastifyBaseLogger,
    // Pairs made once per run: a rotation of a shop's signing key costs nothing to make.
    signingKeys: pooledSigningKeys,
  });
  const app = await buildApp(services);
  await app.ready();
  return { app, db, clock, config, masterKey, logs, net };
}

export interface TestShop {
  shop: Shop;
  secret: string;
  auth: string;
}

// Generating an RSA key takes a large share of a second; test shops share one pair made per run.
export async function newShop(h: Harness, input: CreateShopInput = {}): Promise<TestShop> {
  const { shop, secret } = await createShop(h, {
    name: 'Test shop',
    test: true,
    signingKeys: shopSigningKeys(),
    ...input,
  });
  return { shop, secret, auth: `Basic ${Buffer.from(`${shop.id}:${secret}`).toString('base64')}` };
}

export interface Sent {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

/** A small client that talks to the app in-process, as one shop. */
export function client(h: Harness, as: TestShop | undefined) {
  const send = async (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Sent> => {
    const res = await h.app.inject({
      method,
      url,
      headers: {
        ...(as ? { authorization: as.auth } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    let parsed: unknown;
    try {
      parsed = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, body: parsed, headers: res.headers, text: res.body };
  };
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Record<string, string>) =>
      send('POST', url, body ?? {}, headers),
    put: (url: string, body?: unknown, headers?: Record<string, string>) =>
      send('PUT', url, body ?? {}, headers),
    send,
  };
}

export type Client = ReturnType<typeof client>;

/**
 * Runs `fn` with the worker's shared clock moved on by `to` milliseconds, or set to the instant `to`,
 * and always puts it back: files of one worker share the clock.
 */
export async function withClock<T>(h: Harness, to: number | string, fn: () => Promise<T>): Promise<T> {
  const before = h.clock.now();
  if (typeof to === 'number') h.clock.advance(to);
  else h.clock.set(to);
  try {
    return await fn();
  } finally {
    h.clock.set(before);
  }
}
