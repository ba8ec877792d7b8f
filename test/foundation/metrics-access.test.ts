import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { startMetricsListener } from '../../src/http/metrics.js';
import { type Harness, harness, newShop, TEST_METRICS_TOKEN } from '../harness.js';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  seededDataDir,
  start,
  waitForBanner,
} from './kopek-process.js';

/**
 * /metrics tells a stranger how busy every route is: on the main port it asks for METRICS_TOKEN
 * (and is not there without one); METRICS_PORT serves it on a listener of its own, on loopback.
 */

let h: Harness;
const dirs: string[] = [];
const log = pino({ level: 'silent' });

beforeAll(async () => {
  h = await harness();
});

afterAll(() => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const metricsWith = (authorization?: string) =>
  h.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('/metrics on the main port', () => {
  it('answers 401 in the contract’s shape without the token, or with a wrong one', async () => {
    const shop = await newShop(h);
    const cases = [
      [undefined, 'Authentication required: send Authorization: Bearer with METRICS_TOKEN'],
      [`Bearer ${TEST_METRICS_TOKEN}x`, 'Invalid metrics token'],
      [`Bearer ${TEST_METRICS_TOKEN.slice(0, -1)}`, 'Invalid metrics token'],
      [shop.auth, 'Authentication required: send Authorization: Bearer with METRICS_TOKEN'],
    ] as const;
    for (const [authorization, message] of cases) {
      const res = await metricsWith(authorization);
      expect(res.statusCode, authorization).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="Kopek metrics"');
      expect(res.json()).toEqual({ message, errors: { base: [message] } });
      expect(res.body).not.toContain('kopek_http_requests_total');
    }
    const ok = await metricsWith(`bearer  ${TEST_METRICS_TOKEN}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE kopek_http_requests_total counter');
  });

  it('is not served at all without METRICS_TOKEN', async () => {
    const config = loadConfig({ PUBLIC_URL: 'http://kopek.test', KOPEK_MASTER_KEY: 'ab'.repeat(32) });
    const app = await buildApp({ config, db: h.db, clock: h.clock, masterKey: h.masterKey, log });
    try {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        message: 'No route GET /metrics',
        errors: { base: ['No route GET /metrics'] },
      });
    } finally {
      await app.close();
    }
  });
});

describe('the METRICS_PORT listener', () => {
  it('serves GET /metrics without a token, and nothing else', async () => {
    const listener = await startMetricsListener(
      h.app.metrics,
      { metricsPort: 0, metricsHost: '127.0.0.1', metricsToken: undefined },
      log,
    );
    if (!listener) throw new Error('no listener');
    try {
      const base = `http://127.0.0.1:${listener.port}`;
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(await res.text()).toContain('# TYPE kopek_http_requests_total counter');
      const other = await fetch(`${base}/customers`);
      expect(other.status).toBe(404);
      expect(((await other.json()) as { errors: unknown }).errors).toEqual({
        base: ['No route GET /customers: this listener serves GET /metrics only'],
      });
      const post = await fetch(`${base}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET');
      await post.arrayBuffer();
    } finally {
      await listener.close();
    }
    expect(await portOpen(listener.port)).toBe(false);
  });

  it('asks for METRICS_TOKEN there too when it is set', async () => {
    const listener = await startMetricsListener(
      h.app.metrics,
      { metricsPort: 0, metricsHost: '127.0.0.1', metricsToken: TEST_METRICS_TOKEN },
      log,
    );
    if (!listener) throw new Error('no listener');
    try {
      const url = `http://127.0.0.1:${listener.port}/metrics`;
      const refused = await fetch(url);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="Kopek metrics"');
      await refused.arrayBuffer();
      const ok = await fetch(url, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
    } finally {
      await listener.close();
    }
  });

  it('is started and stopped by kopek serve', { timeout: 120_000, ...EMBEDDED_ONLY }, async () => {
    const dataDir = await seededDataDir('kopek-metrics-');
    dirs.push(dataDir);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const env = { ...embeddedEnv(dataDir, port), METRICS_PORT: String(metricsPort), BILLING: 'off' };
    const s = start(process.execPath, [...KOPEK, 'serve'], env);
    await waitForBanner(s);
    expect(s.output()).toContain(`Metrics:       http://127.0.0.1:${metricsPort}/metrics`);
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('kopek_http_requests_total');
    const main = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(main.status).toBe(404);
    await main.arrayBuffer();

    s.child.kill('SIGTERM');
    expect((await s.exited).code).toBe(0);
    expect(await portOpen(metricsPort)).toBe(false);
  });
});
