import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { harness, newShop } from '../harness.js';

/**
 * The platform's official PHP client's own test of a checkout's address, `testRedirectUrl`
 * (begateway/begateway-api-php, tests/BeGateway/GetPaymentTokenTest.php), run unchanged by PHPUnit
 * against a Kopek listening on loopback (docs/testing.md, The platform's PHP client). It runs where
 * PHP and PHPUnit are installed and BEGATEWAY_PHP_DIR names a checkout of the client; elsewhere it
 * is skipped, and test/checkout/api/checkouts.test.ts holds Kopek to the same assertions.
 */

const PHP_DIR = process.env.BEGATEWAY_PHP_DIR ?? '';
const PHPUNIT = '/usr/bin/phpunit';
const ready =
  PHP_DIR !== '' &&
  existsSync(join(PHP_DIR, 'tests', 'BeGateway', 'GetPaymentTokenTest.php')) &&
  existsSync(PHPUNIT);

let app: App | undefined;
afterAll(async () => {
  await app?.close();
});

describe.skipIf(!ready)("the platform's PHP client", () => {
  it('passes its own testRedirectUrl against Kopek', async () => {
    const h = await harness();
    const shop = await newShop(h, { name: 'PHP client shop' });
    const probe = loadConfig({ KOPEK_MASTER_KEY: h.masterKey.toString('hex') });
    app = await buildApp({ config: probe, db: h.db, clock: h.clock, masterKey: h.masterKey });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // The app answers redirect_url with its CHECKOUT_URL: the address it listens on.
    await app.close();
    const config = loadConfig({
      PUBLIC_URL: base,
      CHECKOUT_URL: base,
      GATEWAY_URL: base,
      KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    });
    app = await buildApp({ config, db: h.db, clock: h.clock, masterKey: h.masterKey });
    await app.listen({ port: Number(new URL(base).port), host: '127.0.0.1' });

    const run = await promisify(execFile)(
      PHPUNIT,
      [
        '--bootstrap',
        join(import.meta.dirname, 'php', 'bootstrap.php'),
        '--filter',
        'testRedirectUrl',
        join(PHP_DIR, 'tests', 'BeGateway', 'GetPaymentTokenTest.php'),
      ],
      {
        env: {
          ...process.env,
          BEGATEWAY_PHP_DIR: PHP_DIR,
          KOPEK_CHECKOUT_URL: base,
          SHOP_ID: String(shop.shop.id),
          SHOP_SECRET_KEY: shop.secret,
        },
      },
    ).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: `${error.stdout ?? ''}${error.stderr ?? ''}`,
      stderr: '',
    }));
    expect(run.stdout).toContain('OK (1 test, ');
  });
});
