import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bannerLines, bannerText } from '../../src/cli/banner.js';
import { sandboxOnFirstStart, startUpBanner } from '../../src/cli/start-up.js';
import { ManualClock } from '../../src/clock.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { card, gatewayShop } from '../gateway/helpers.js';
import { type FreshStore, freshStore, silentLog } from '../keys/store.js';
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

/**
 * What the first start of `kopek serve` makes and prints, on a store of the test's own as the run's
 * store kind gives it (bin/kopek.js starting a real server is test/foundation/embedded-store).
 */
describe('the first start of kopek serve', () => {
  let store: FreshStore | undefined;
  afterAll(async () => {
    await store?.close();
  });

  /** One start of `kopek serve` on the store: what it makes, and the banner it prints. */
  async function startOnce(db: Db, config: Config): Promise<string> {
    const deps = {
      db,
      clock: new ManualClock(),
      masterKey: randomBytes(32),
      publicUrl: config.publicUrl,
      config,
      log: silentLog,
    };
    return startUpBanner(config, db.kind, await sandboxOnFirstStart(deps), undefined, 'npx kopek');
  }

  it.skipIf(!process.env.DATABASE_URL)(
    'on PostgreSQL makes no shop, prints no secret key, and says how to make a shop',
    async () => {
      store = await freshStore();
      const config = loadConfig({
        PUBLIC_URL: 'http://127.0.0.1:8080',
        DATABASE_URL: store.url,
        KOPEK_MASTER_KEY: randomBytes(32).toString('hex'),
      });
      for (let run = 0; run < 2; run++) {
        const output = await startOnce(store.db, config);
        expect(output).toContain('Kopek is running (PostgreSQL)');
        expect(output).not.toContain('Secret key');
        expect(output).not.toContain('sandbox');
        expect(output).toContain(
          "No shops yet. Create one (its secret key is printed once) with:\n  npx kopek shop create --name 'My shop'",
        );
      }
      expect(await store.db.query('SELECT count(*)::int AS n FROM shops')).toEqual([{ n: 0 }]);
    },
  );

  it.skipIf(process.env.DATABASE_URL)(
    'on the embedded store makes the sandbox shop once and shows its key once',
    async () => {
      store = await freshStore();
      const dataDir = join(tmpdir(), 'kopek-banner');
      const config = loadConfig({ PUBLIC_URL: 'http://127.0.0.1:8080', DATA_DIR: dataDir });
      const first = await startOnce(store.db, config);
      expect(first).toContain(`Kopek is running (embedded store in ${dataDir})`);
      expect(first).toContain('Created a sandbox shop on this first start:');
      expect(first).toMatch(/Secret key:\s+[0-9a-f]{64}/);
      const second = await startOnce(store.db, config);
      expect(second).not.toContain('Secret key');
      expect(second).not.toContain('No shops yet');
      expect(await store.db.query('SELECT name, test FROM shops')).toEqual([
        { name: 'Sandbox shop', test: true },
      ]);
    },
  );
});
