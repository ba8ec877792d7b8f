import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type App, buildApp } from '../../src/http/app.js';
import { harness, newShop, type TestShop } from '../harness.js';
import { cardBody, card as subscriptionCard } from '../subscriptions/helpers.js';
import { card, charge } from './helpers.js';

/**
 * The cardholder's side of 3-D Secure in real Chromium: the app listens on a loopback port, the
 * shop's return_url is a small HTTP server that records where the browser landed.
 */

const CHROMIUM = '/usr/bin/chromium';
const CHALLENGE = '4012000000001097';
const SCREENSHOT = join(tmpdir(), 'kopek-3ds-challenge.png');

interface Receiver {
  url: string;
  hits: URL[];
  server: Server;
}

let app: App | undefined;
let base = '';
let receiver: Receiver | undefined;
let browser: Browser | undefined;
const logs: string[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/** A free loopback port, so PUBLIC_URL can name it before the app is built. */
async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function startReceiver(): Promise<Receiver> {
  const hits: URL[] = [];
  const server = createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://receiver'));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Back at the shop</h1></html>');
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, hits, server };
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}; the browser tests need it: apt-get update && apt-get install -y chromium`,
    );
  }
  const h = await harness();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    PUBLIC_URL: base,
    GATEWAY_URL: base,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    LOG_LEVEL: 'debug',
  });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink) as FastifyBaseLogger;
  app = await buildApp({ config, db: h.db, clock: h.clock, masterKey: h.masterKey, logger });
  await app.listen({ port, host: '127.0.0.1' });
  receiver = await startReceiver();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  if (receiver) await new Promise((resolve) => receiver?.server.close(resolve));
  // Card numbers never reach a log line, not even through the page's requests.
  const all = logs.join('');
  for (const number of [CHALLENGE, '4012000000001006', '4012000000001022']) expect(all).not.toContain(number);
});

async function api(shop: TestShop, method: 'GET' | 'POST', path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: shop.auth, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function threeDsShop(): Promise<TestShop> {
  return newShop(await harness(), { threeDs: true, name: 'Corner Shop' });
}

/** A payment waiting for 3-D Secure, returning to the receiver with a query of its own. */
async function incompletePayment(shop: TestShop, number: string, extra: Record<string, unknown> = {}) {
  const res = await api(shop, 'POST', '/transactions/payments', {
    request: charge({ credit_card: card(number), return_url: `${receiver?.url}/return?order=42`, ...extra }),
  });
  expect(res.status).toBe(200);
  const { transaction } = res.body;
  expect(transaction.status).toBe('incomplete');
  expect(transaction.redirect_url).toBe(`${base}/process/${transaction.uid}`);
  return transaction as { uid: string; redirect_url: string };
}

async function withPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
  const context = await (browser as Browser).newContext();
  try {
    return await fn(await context.newPage());
  } finally {
    await context.close();
  }
}

const atReceiver = (url: URL) => url.origin === receiver?.url;

/** Opens the redirect_url, clicks `button` and waits for the browser to land at the shop. */
async function choose(redirectUrl: string, button: string, screenshot = false): Promise<URL> {
  return withPage(async (page) => {
    await page.goto(redirectUrl);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      '3-D Secure authentication',
    );
    if (screenshot) await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await Promise.all([
      page.waitForURL(atReceiver),
      page.getByRole('button', { name: button, exact: true }).click(),
    ]);
    return new URL(page.url());
  });
}

describe('the 3-D Secure page in Chromium', () => {
  it('shows the challenge; "Pass authentication" returns to the shop with status successful', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE);
    const page = await withPage(async (p) => {
      await p.goto(t.redirect_url);
      return {
        lang: await p.locator('html').getAttribute('lang'),
        text: await p.locator('main').textContent(),
        buttons: await p.getByRole('button').allInnerTexts(),
      };
    });
    expect(page.lang).toBe('en');
    expect(page.text).toContain('19.99 EUR');
    expect(page.text).toContain('Visa •••• 1097');
    expect(page.text).toContain('Corner Shop');
    expect(page.buttons).toEqual(['Pass authentication', 'Fail authentication']);

    const landed = await choose(t.redirect_url, 'Pass authentication', true);
    expect(landed.pathname).toBe('/return');
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      order: '42',
      uid: t.uid,
      status: 'successful',
    });
    expect(receiver?.hits.some((hit) => hit.searchParams.get('uid') === t.uid)).toBe(true);
    const after = await api(shop, 'GET', `/transactions/${t.uid}`);
    expect(after.body.transaction).toMatchObject({ uid: t.uid, status: 'successful' });
    expect(after.body.transaction.redirect_url).toBeUndefined();
  });

  it('"Fail authentication" returns to the shop with status failed', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE);
    const landed = await choose(t.redirect_url, 'Fail authentication');
    expect(Object.fromEntries(landed.searchParams)).toEqual({ order: '42', uid: t.uid, status: 'failed' });
    const after = await api(shop, 'GET', `/transactions/${t.uid}`);
    expect(after.body.transaction).toMatchObject({
      status: 'failed',
      message: '3-D Secure authentication failed',
    });
  });

  it.each([
    ['4012000000001006', 'successful'],
    ['4012000000001022', 'failed'],
  ])('completes frictionless card %s without a click: %s', async (number, status) => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, number);
    const landed = await withPage(async (page) => {
      await page.goto(t.redirect_url);
      await page.waitForURL(atReceiver);
      return new URL(page.url());
    });
    expect(Object.fromEntries(landed.searchParams)).toEqual({ order: '42', uid: t.uid, status });
    expect((await api(shop, 'GET', `/transactions/${t.uid}`)).body.transaction.status).toBe(status);
  });

  it('without a return_url shows the result, in the language of the payment, and keeps it on reload', async () => {
    const shop = await threeDsShop();
    const t = await incompletePayment(shop, CHALLENGE, { return_url: undefined, language: 'ru' });
    const result = await withPage(async (page) => {
      await page.goto(t.redirect_url);
      await page.getByRole('button', { name: 'Пройти проверку', exact: true }).click();
      await page.getByRole('heading', { name: 'Платёж прошёл успешно' }).waitFor();
      const first = await page.locator('main').textContent();
      await page.goto(t.redirect_url);
      return {
        first,
        again: await page.locator('main').textContent(),
        lang: await page.locator('html').getAttribute('lang'),
      };
    });
    expect(result.lang).toBe('ru');
    expect(result.first).toContain('19.99 EUR');
    expect(result.again).toContain('Платёж прошёл успешно');
    expect((await api(shop, 'GET', `/transactions/${t.uid}`)).body.transaction.status).toBe('successful');
  });
});

describe('a subscription whose first charge needs 3-D Secure, in Chromium', () => {
  async function redirecting(shop: TestShop) {
    const res = await api(
      shop,
      'POST',
      '/subscriptions',
      cardBody({ card: subscriptionCard(CHALLENGE), return_url: `${receiver?.url}/subscribed` }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      state: 'redirecting',
      paid_billing_cycles: 0,
      last_transaction: { status: 'incomplete', redirect_url: expect.stringMatching(/\/process\//) },
    });
    return res.body as { id: string; last_transaction: { uid: string; redirect_url: string } };
  }

  it('becomes active once the cardholder passes', async () => {
    const shop = await threeDsShop();
    const sub = await redirecting(shop);
    const landed = await choose(sub.last_transaction.redirect_url, 'Pass authentication');
    expect(landed.pathname).toBe('/subscribed');
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      id: sub.id,
      uid: sub.last_transaction.uid,
      status: 'successful',
    });
    const after = await api(shop, 'GET', `/subscriptions/${sub.id}`);
    expect(after.body).toMatchObject({
      state: 'active',
      paid_billing_cycles: 1,
      last_transaction: { uid: sub.last_transaction.uid, status: 'successful' },
    });
  });

  it('fails once the cardholder fails', async () => {
    const shop = await threeDsShop();
    const sub = await redirecting(shop);
    const landed = await choose(sub.last_transaction.redirect_url, 'Fail authentication');
    expect(landed.searchParams.get('status')).toBe('failed');
    const after = await api(shop, 'GET', `/subscriptions/${sub.id}`);
    expect(after.body).toMatchObject({
      state: 'failed',
      paid_billing_cycles: 0,
      last_transaction: { uid: sub.last_transaction.uid, status: 'failed' },
    });
  });
});
