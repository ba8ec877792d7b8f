import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { type Harness, harness, type TestShop } from '../harness.js';
import { endpointOf } from './broker.js';

/**
 * Real Chromium against a real listening Kopek: the worker's shared store, an app of its own whose
 * PUBLIC_URL and CHECKOUT_URL are the loopback port it listens on (so every link it prints works in
 * the browser), and a "shop" server that records where buyers land.
 *
 *   const kit = await startBrowserKit();          // in beforeAll
 *   await kit.withPage(async (page) => { ... });  // a fresh context (cookies) per call
 *   await kit.withPage(fn, { clock: true });       // the page's timers wait for page.clock.runFor
 *   await kit.screenshot(page, 'product-paid');   // test-artifacts/screenshots/<name>.png
 *   await kit.stop();                             // in afterAll
 *
 * The test files of one worker share one kit (as they share the harness): building and starting an
 * app costs seconds on a loaded machine, and no browser test needs an app of its own. Each test works
 * as its own shop and finds its own arrivals at the shop site by their ids, so what other files left
 * there (logs, hits) changes nothing; the log checks only get stricter. A kit with settings of its
 * own (`startBrowserKit(env)`) is the file's alone and is closed by its stop().
 */

/** How long a page's action or wait may take before it fails (vitest's test timeout is 120 s). */
export const PAGE_TIMEOUT_MS = 90_000;

export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'screenshots');

export interface ShopSite {
  url: string;
  /** Every request the site got: where buyers were sent back to, with their query. */
  hits: URL[];
}

export interface BrowserKit {
  h: Harness;
  app: App;
  /** The app's address, e.g. http://127.0.0.1:41234 (PUBLIC_URL, CHECKOUT_URL and GATEWAY_URL). */
  base: string;
  shopSite: ShopSite;
  browser: Browser;
  /** Every log line of the app, for checks that card data never reaches a log. */
  logs: string[];
  withPage<T>(fn: (page: Page, context: BrowserContext) => Promise<T>, options?: PageOptions): Promise<T>;
  screenshot(page: Page, name: string): Promise<void>;
  /** The API as a shop, over real HTTP. */
  api(shop: TestShop, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export interface PageOptions {
  javaScriptEnabled?: boolean;
  /** A phone-sized window. */
  mobile?: boolean;
  locale?: string;
  /**
   * Playwright's clock installed and stopped before the page opens: the page's timers (a result
   * page's scripted continue) fire only when the test moves the clock, `page.clock.runFor(ms)`, at
   * once instead of after a real wait. Off unless asked, so no other page's timers change.
   */
  clock?: boolean;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function startShopSite(): Promise<ShopSite & { server: Server }> {
  const hits: URL[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    hits.push(new URL(req.url ?? '/', 'http://shop.test'));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Shop</title><h1>Back at the shop</h1></html>');
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, hits, server };
}

/**
 * Screenshots are what a reviewer looks at, not what a test asserts. Headless Chromium now and then
 * refuses a capture ("Unable to capture screenshot") while the machine is loaded; the page is
 * fine, so try again a moment later, and fall back to the visible part before giving up.
 */
async function captureScreenshot(page: Page, path: string): Promise<void> {
  const attempts: { fullPage: boolean }[] = [{ fullPage: true }, { fullPage: true }, { fullPage: false }];
  let failure: unknown;
  for (const [i, { fullPage }] of attempts.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200 * i));
    try {
      await page.screenshot({ path, fullPage });
      return;
    } catch (error) {
      if (!String(error).includes('Unable to capture screenshot')) throw error;
      failure = error;
    }
  }
  throw failure;
}

/**
 * Installs Playwright's clock in the context and stops it a little ahead of now (pauseAt moves
 * forward only; the margin covers a slow round trip). The pages' own Date reads that time.
 */
async function stopClock(context: BrowserContext): Promise<void> {
  await context.clock.install();
  await context.clock.pauseAt(Date.now() + 10_000);
}

let shared: Promise<BrowserKit> | undefined;

export async function startBrowserKit(env: Record<string, string> = {}): Promise<BrowserKit> {
  if (Object.keys(env).length > 0) return launchKit(env, { own: true });
  shared ??= launchKit({}, { own: false }).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

async function launchKit(env: Record<string, string>, { own }: { own: boolean }): Promise<BrowserKit> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const h = await harness();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    PUBLIC_URL: base,
    CHECKOUT_URL: base,
    GATEWAY_URL: base,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    LOG_LEVEL: 'debug',
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'debug' }, sink) as FastifyBaseLogger;
  const app = await buildApp({ config, db: h.db, clock: h.clock, masterKey: h.masterKey, log: logger });
  await app.listen({ port, host: '127.0.0.1' });
  const site = await startShopSite();
  if (!own) {
    // The worker's kit lives as long as the worker: its servers must not keep the worker from ending.
    app.server.unref();
    site.server.unref();
  }
  // The run's one Chromium; this file's pages live in contexts of their own.
  const browser = await chromium.connect(await endpointOf(inject('browserBroker')));

  return {
    h,
    app,
    base,
    shopSite: { url: site.url, hits: site.hits },
    browser,
    logs,
    async withPage(fn, options = {}) {
      const context = await browser.newContext({
        javaScriptEnabled: options.javaScriptEnabled ?? true,
        ...(options.mobile ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } : {}),
        ...(options.locale ? { locale: options.locale } : {}),
      });
      try {
        if (options.clock) await stopClock(context);
        const page = await context.newPage();
        // Guards against a hung page, not measures: a loaded machine running several pages at once
        // may take far longer than Playwright's 30 s default, and the test's own timeout is longer.
        page.setDefaultTimeout(PAGE_TIMEOUT_MS);
        return await fn(page, context);
      } finally {
        await context.close();
      }
    },
    async screenshot(page, name) {
      await captureScreenshot(page, join(SCREENSHOTS, `${name}.png`));
    },
    async api(shop, method, path, body) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: shop.auth,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed as any };
    },
    async stop() {
      // The worker's kit stays for the worker's next file; each withPage closed its own context.
      if (!own) return;
      await browser.close();
      await app.close();
      await new Promise((resolve) => site.server.close(resolve));
    },
  };
}
