import { createSign, createVerify, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CardRow } from '../../src/cards/repository.js';
import { cardStamp, revealNumber, storeCard } from '../../src/cards/vault.js';
import { ManualClock } from '../../src/clock.js';
import { buildApp } from '../../src/compose/app.js';
import { Keyring, masterKeyId } from '../../src/crypto/keyring.js';
import { openKeyring } from '../../src/crypto/lookup-keys.js';
import type { ShopRow } from '../../src/shops/repository.js';
import { createShop, hashSecret, shopSecret, signingKeyOf } from '../../src/shops/service.js';
import { runKopek } from '../cli/run-cli.js';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  kopek,
  seededDataDir,
  start,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { shopSigningKeys } from '../signing-keys.js';
import { type FreshStore, freshStore, keysConfig, silentLog } from './store.js';

/** The real `kopek keys rotate`: killed with SIGKILL mid-way on PostgreSQL, and on the embedded store. */

const pgUrl = process.env.DATABASE_URL;
const dirs: string[] = [];
let store: FreshStore | undefined;
afterAll(async () => {
  cleanUp();
  await store?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const CARDS = 300;

describe.skipIf(!pgUrl)('kopek keys rotate on PostgreSQL (set DATABASE_URL)', () => {
  it('killed with SIGKILL mid-way and run again, leaves every value usable under the new key alone', async () => {
    store = await freshStore();
    const db = store.db;
    const [A, B] = [randomBytes(32), randomBytes(32)];
    const clock = new ManualClock();
    const signingKeys = shopSigningKeys();
    const secrets = new Map<number, string>();
    for (let i = 0; i < 3; i++) {
      const { shop, secret } = await createShop({ db, clock, masterKey: A }, { test: true, signingKeys });
      secrets.set(shop.id, secret);
    }
    const shopIds = [...secrets.keys()];
    const numbers = new Map<string, string>();
    for (let i = 0; i < CARDS; i++) {
      const number = i % 2 ? '4200000000000000' : '5555555555554444';
      const card = {
        kind: 'number',
        number,
        holder: 'Jane Roe',
        expMonth: 3,
        expYear: 2031,
        cvc: undefined,
      } as const;
      const row = await storeCard(db, A, shopIds[i % 3] as number, card, clock.now());
      numbers.set(row.token, number);
    }
    const env = {
      ...process.env,
      DATABASE_URL: store.url,
      KOPEK_MASTER_KEY: B.toString('hex'),
      KOPEK_MASTER_KEY_PREVIOUS: A.toString('hex'),
      LOG_LEVEL: 'warn',
    };
    const during = new Keyring(B, [A]);
    for (let kill = 0; kill < 2; kill++) {
      // One value a transaction: hundreds of commits, so a kill a moment after the start lands mid-way.
      const run = start(process.execPath, [...KOPEK, 'keys', 'rotate', '--batch-size', '1'], env);
      await run.untilOutput('the rotation to start', (output) => output.includes('to re-seal'));
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 60)));
      run.child.kill('SIGKILL');
      expect((await run.exited).signal, run.output()).toBe('SIGKILL');
      // Nothing is lost: every value opens under the keys the instances hold.
      for (const row of await db.query<CardRow>('SELECT * FROM cards'))
        expect(revealNumber(during, row)).toBe(numbers.get(row.token));
    }
    const [{ n: moved } = { n: '0' }] = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM cards WHERE number_enc LIKE 'k1:' || $1 || ':%'",
      [masterKeyId(B)],
    );
    expect(Number(moved)).toBeGreaterThan(0);

    const last = await kopek(env, 'keys', 'rotate');
    expect(last.code, last.output).toBe(0);
    expect(last.output).toContain(`Done: nothing is left sealed under ${masterKeyId(A)}`);
    expect(last.output).toMatch(/cards\.number_enc: \d+ re-sealed, 0 left/);

    // The previous key is not needed: every card opens and keeps its stamp, every shop signs and
    // authenticates, and a card charges through an app holding only the new key.
    const only = await openKeyring(db, new Keyring(B));
    for (const row of await db.query<CardRow>('SELECT * FROM cards')) {
      expect(revealNumber(only, row)).toBe(numbers.get(row.token));
      expect(cardStamp(only, row.bin === '420000' ? '4200000000000000' : '5555555555554444')).toBe(row.stamp);
    }
    for (const row of await db.query<ShopRow>('SELECT * FROM shops')) {
      expect(shopSecret(only, row)).toBe(secrets.get(row.id));
      expect(hashSecret(secrets.get(row.id) as string)).toBe(row.secret_hash);
      const signature = createSign('RSA-SHA256').update('{}').sign(signingKeyOf(only, row), 'base64');
      expect(createVerify('RSA-SHA256').update('{}').verify(row.public_key, signature, 'base64')).toBe(true);
    }
    const app = await buildApp({ config: keysConfig(B), db, clock, masterKey: only, log: silentLog });
    try {
      const [card] = await db.query<CardRow>('SELECT * FROM cards ORDER BY token LIMIT 1');
      const secret = secrets.get(card?.shop_id as number) as string;
      const paid = await app.inject({
        method: 'POST',
        url: '/transactions/payments',
        headers: {
          authorization: `Basic ${Buffer.from(`${card?.shop_id}:${secret}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        payload: JSON.stringify({
          request: {
            amount: 100,
            currency: 'EUR',
            description: 'After the rotation',
            tracking_id: randomUUID(),
            credit_card: { token: card?.token },
          },
        }),
      });
      expect(paid.json().transaction?.status, paid.body).toBe('successful');
    } finally {
      await app.close();
    }
  });
});

describe('kopek keys rotate on the embedded store', () => {
  it(
    'runs in the server holding DATA_DIR, which then seals and opens with the new key',
    EMBEDDED_ONLY,
    async () => {
      const dir = await seededDataDir('kopek-keys-');
      dirs.push(dir);
      const port = await freePort();
      const env = { ...embeddedEnv(dir, port), BILLING: 'off', NOTIFICATIONS: 'off' };
      const serve = () => {
        const s = start(process.execPath, [...KOPEK, 'serve'], env);
        return waitForBanner(s).then(() => s);
      };
      let server = await serve();
      const id = /Shop id:\s+(\d+)/.exec(server.output())?.[1];
      const secret = /Secret key:\s+([0-9a-f]{64})/.exec(server.output())?.[1];
      const auth = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
      const send = async (path: string, request: unknown) =>
        (await fetch(`http://127.0.0.1:${port}${path}`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({ request }),
        }).then((r) => r.json())) as Record<string, any>;
      const saved = await send('/credit_cards', {
        number: '4200000000000000',
        holder: 'Jane Roe',
        exp_month: '03',
        exp_year: '2031',
      });
      const pay = () =>
        send('/transactions/payments', {
          amount: 100,
          currency: 'EUR',
          description: 'Rotation',
          tracking_id: randomUUID(),
          credit_card: { token: saved.token },
        });
      const before = readFileSync(join(dir, 'master.key'), 'utf8');

      // The CLI in this process: what is between processes here is the control socket to the server.
      const rotated = await runKopek(undefined, env, 'keys', 'rotate');
      expect(rotated.code, rotated.output).toBe(0);
      expect(rotated.output).toContain('Made a new master key in DATA_DIR/master.key');
      expect(rotated.output).toMatch(/the previous key \([0-9a-f]{8}\) was deleted/);
      expect(readFileSync(join(dir, 'master.key'), 'utf8')).not.toBe(before);
      expect(existsSync(join(dir, 'master.key.previous'))).toBe(false);
      expect((await pay()).transaction?.status).toBe('successful');

      // Restarted, the server reads the new key from its file and still charges the card.
      process.kill(server.child.pid as number, 'SIGTERM');
      await server.exited;
      server = await serve();
      expect((await pay()).transaction?.status).toBe('successful');
      const again = await send('/credit_cards', {
        number: '4200000000000000',
        holder: 'Jane Roe',
        exp_month: '03',
        exp_year: '2031',
      });
      expect(again.stamp).toBe(saved.stamp);
    },
  );
});
