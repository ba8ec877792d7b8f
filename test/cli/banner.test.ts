import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { bannerLines, bannerText } from '../../src/cli/banner.js';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  start,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { card, gatewayShop } from '../gateway/helpers.js';
import { customer, monthly } from '../subscriptions/helpers.js';

/**
 * What `kopek serve` prints: every address answers on the app it describes, with the placeholders
 * filled in from a real product, payment and subscription.
 */

describe('the start-up banner', () => {
  it('prints only addresses the app serves', async () => {
    const g = await gatewayShop({ threeDs: true });
    const product = await g.api.post('/products', {
      name: 'T-shirt',
      description: 'Black, size M',
      currency: 'EUR',
      amount: 1999,
    });
    expect(product.status).toBe(201);
    const payment = await g.pay({ credit_card: card('4012000000001097') });
    const subscription = await g.api.post('/subscriptions', { plan: monthly(), customer: customer() });
    expect(subscription.status).toBe(201);
    const token = subscription.body.token as string;

    const lines = bannerLines(g.h.config);
    expect(lines.map((l) => l.label).filter(Boolean)).toEqual([
      'API',
      'Docs',
      'Health',
      'Payment pages',
      '3-D Secure',
      'Cabinet',
    ]);
    const cabinet = lines.find((l) => l.label === 'Cabinet');
    expect(cabinet?.url).toBe(`${g.h.config.publicUrl}/cabinet`);
    // Without a session the cabinet sends a visitor to its sign-in page, which answers.
    const home = await g.h.app.inject({ method: 'GET', url: '/cabinet' });
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe('/cabinet/sign-in?next=%2Fcabinet');
    const signIn = await g.h.app.inject({ method: 'GET', url: home.headers.location as string });
    expect(signIn.statusCode).toBe(200);
    for (const { url } of lines) {
      const filled = url
        .replace('{id}', product.body.id)
        .replace('{shop_id}', String(g.shop.shop.id))
        .replace('{uid}', payment.body.transaction.uid)
        .replace('…', encodeURIComponent(token));
      expect(filled, url).not.toMatch(/[{}…]/);
      const { pathname, search } = new URL(filled);
      // The API's base is where its paths start; an authenticated list shows it answers there.
      const path = pathname === '/' ? '/products' : `${pathname}${search}`;
      const res = await g.h.app.inject({
        method: 'GET',
        url: path,
        headers: pathname === '/' ? { authorization: g.shop.auth } : {},
      });
      expect(res.statusCode, `${url} → ${path}`).toBeLessThan(400);
    }
  });

  it('names the gateway only when it is another server', () => {
    const same = {
      publicUrl: 'https://pay.example',
      checkoutUrl: 'https://pay.example',
      gatewayUrl: 'https://pay.example',
    };
    expect(bannerText(same)).not.toContain('Gateway:');
    expect(bannerText(same)).toContain('  3-D Secure:    https://pay.example/process/{uid}');
    const split = { ...same, gatewayUrl: 'https://gateway.example' };
    expect(bannerText(split)).toContain(
      '  Gateway:       https://gateway.example  (card operations go to this server)',
    );
    expect(bannerText(split)).toContain('https://gateway.example/process/{uid}');
  });
});

const pgUrl = process.env.DATABASE_URL;
const dirs: string[] = [];
const schemas: string[] = [];

async function sql(text: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

afterAll(async () => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

/** Starts `kopek serve`, waits for its banner, stops it, and answers what it printed. */
async function serveOnce(env: NodeJS.ProcessEnv): Promise<string> {
  const s = start(process.execPath, [...KOPEK, 'serve'], { ...env, BILLING: 'off' });
  await waitForBanner(s);
  // The banner is written in one piece: what follows it is not part of it.
  const output = s.output();
  s.child.kill('SIGTERM');
  expect((await s.exited).code).toBe(0);
  return output;
}

describe('the first start of kopek serve', { timeout: 120_000 }, () => {
  it('on PostgreSQL makes no shop, prints no secret key, and says how to make a shop', {
    skip: !pgUrl,
  }, async () => {
    const schema = `kopek_banner_${process.pid}_${randomBytes(3).toString('hex')}`;
    schemas.push(schema);
    await sql(`CREATE SCHEMA ${schema}`);
    const url = new URL(pgUrl as string);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      ...embeddedEnv('/nonexistent', await freePort()),
      DATABASE_URL: url.toString(),
      KOPEK_MASTER_KEY: randomBytes(32).toString('hex'),
    };
    for (let run = 0; run < 2; run++) {
      const output = await serveOnce(env);
      expect(output).toContain('Kopek is running (PostgreSQL)');
      expect(output).not.toContain('Secret key');
      expect(output).not.toContain('sandbox');
      expect(output).toContain(
        "No shops yet. Create one (its secret key is printed once) with:\n  kopek shop create --name 'My shop'",
      );
    }
    expect(await sql(`SELECT count(*)::int AS n FROM ${schema}.shops`)).toEqual([{ n: 0 }]);
  });

  it('on the embedded store makes the sandbox shop once and shows its key once', EMBEDDED_ONLY, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kopek-banner-'));
    dirs.push(dataDir);
    const env = embeddedEnv(dataDir, await freePort());
    const first = await serveOnce(env);
    expect(first).toContain(`Kopek is running (embedded store in ${dataDir})`);
    expect(first).toContain('Created a sandbox shop on this first start:');
    expect(first).toMatch(/Secret key:\s+[0-9a-f]{64}/);
    const second = await serveOnce(env);
    expect(second).not.toContain('Secret key');
    expect(second).not.toContain('No shops yet');
  });
});
