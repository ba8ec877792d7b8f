import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CardRow } from '../../src/cards/repository.js';
import { revealNumber, storeCard } from '../../src/cards/vault.js';
import { ManualClock } from '../../src/clock.js';
import { buildServices } from '../../src/compose/services.js';
import { Keyring, masterKeyId } from '../../src/crypto/keyring.js';
import type { Db } from '../../src/db/db.js';
import { createShop } from '../../src/shops/service.js';
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

/**
 * Every instance of a store must hold its master key. One started with another key (a mistyped
 * KOPEK_MASTER_KEY) would seal new cards and shop secrets that no other instance can open, and derive
 * card stamps that match no earlier payment; so it does not start, and leaves the store as it was.
 */

/** The refusal, naming the key the store's values are sealed under. */
const refusal = (needed: Buffer) =>
  new RegExp(
    `open none of the values sealed in this store \\(sealed under master key ${masterKeyId(needed)}\\): is KOPEK_MASTER_KEY .*right\\? Nothing was changed`,
  );
const stores: FreshStore[] = [];
const dirs: string[] = [];
afterAll(async () => {
  cleanUp();
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A store with a shop and a card sealed under `key`. */
async function storeSealedUnder(key: Buffer): Promise<{ store: FreshStore; token: string }> {
  const store = await freshStore();
  stores.push(store);
  const clock = new ManualClock();
  const { shop } = await createShop(
    { db: store.db, clock, masterKey: key },
    { test: true, signingKeys: shopSigningKeys() },
  );
  const card = { kind: 'number', number: '4200000000000000', holder: 'Jane Roe', expMonth: 3, expYear: 2031 };
  const row = await storeCard(store.db, key, shop.id, { ...card, cvc: undefined } as never, clock.now());
  return { store, token: row.token };
}

const everything = async (db: Db) => ({
  cards: await db.query('SELECT * FROM cards ORDER BY token'),
  shops: await db.query('SELECT * FROM shops ORDER BY id'),
  lookupKeys: await db.query('SELECT * FROM lookup_keys ORDER BY id'),
});

const build = (db: Db, current: Buffer, previous: Buffer[] = []) =>
  buildServices(keysConfig(current, previous), { db, migrate: false, log: silentLog });

describe('the services refuse a master key that opens nothing in the store', () => {
  it('a wrong key, or a wrong pair of keys, stops the start and changes nothing', async () => {
    const A = randomBytes(32);
    const { store } = await storeSealedUnder(A);
    const before = await everything(store.db);
    await expect(build(store.db, randomBytes(32))).rejects.toThrow(refusal(A));
    // With previous keys, the lookup keys would otherwise be derived and stored from a wrong key.
    await expect(build(store.db, randomBytes(32), [randomBytes(32)])).rejects.toThrow(refusal(A));
    expect(await everything(store.db)).toEqual(before);
  });

  it('the store’s key starts, alone or as the previous key of a rotation, and opens its cards', async () => {
    const A = randomBytes(32);
    const B = randomBytes(32);
    const { store, token } = await storeSealedUnder(A);
    for (const [current, previous] of [
      [A, []],
      [B, [A]],
    ] as [Buffer, Buffer[]][]) {
      const built = await build(store.db, current, previous);
      const [row] = await store.db.query<CardRow>('SELECT * FROM cards WHERE token = $1', [token]);
      expect(revealNumber(built.services.masterKey, row as CardRow)).toBe('4200000000000000');
      await built.close();
    }
  });

  it('a store with nothing sealed yet starts with any key', async () => {
    const store = await freshStore();
    stores.push(store);
    const built = await build(store.db, randomBytes(32));
    expect(built.services.masterKey).toBeInstanceOf(Keyring);
    await built.close();
  });
});

describe('kopek with another master key than its store’s', () => {
  it('`kopek serve` exits with the reason before it listens; `kopek shop list` too', async () => {
    const port = await freePort();
    const wrong = { KOPEK_MASTER_KEY: randomBytes(32).toString('hex') };
    let needed: Buffer;
    let env: NodeJS.ProcessEnv;
    if (process.env.DATABASE_URL) {
      needed = randomBytes(32);
      const { store } = await storeSealedUnder(needed);
      env = {
        ...process.env,
        DATABASE_URL: store.url,
        ...wrong,
        PORT: String(port),
        HOST: '127.0.0.1',
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'warn',
      };
    } else {
      // The embedded store of a DATA_DIR, with a KOPEK_MASTER_KEY that is not its master.key.
      const dir = await dataDir();
      needed = Buffer.from(readFileSync(join(dir, 'master.key'), 'utf8').trim(), 'hex');
      env = { ...embeddedEnv(dir, port), ...wrong };
    }
    const served = start(process.execPath, [...KOPEK, 'serve'], env);
    await served.untilOutput(
      'the refusal or the banner',
      (o) => refusal(needed).test(o) || o.includes('Kopek is running'),
    );
    expect(served.output()).not.toContain('Kopek is running');
    expect((await served.exited).code, served.output()).toBe(1);
    expect(served.output()).toMatch(refusal(needed));
    const listed = await kopek(env, 'shop', 'list');
    expect(listed.code, listed.output).toBe(1);
    expect(listed.output).toMatch(refusal(needed));
  });

  it('an embedded store started again with its own key file serves', EMBEDDED_ONLY, async () => {
    const dir = await dataDir();
    const port = await freePort();
    const env = { ...embeddedEnv(dir, port), BILLING: 'off', NOTIFICATIONS: 'off' };
    const s = start(process.execPath, [...KOPEK, 'serve'], env);
    await waitForBanner(s);
    process.kill(s.child.pid as number, 'SIGTERM');
    expect((await s.exited).code).toBe(0);
  });
});

/** A DATA_DIR that a first `kopek serve` has set up: its key file, and the sandbox shop sealed under it. */
async function dataDir(): Promise<string> {
  const dir = await seededDataDir('kopek-key-check-');
  dirs.push(dir);
  const port = await freePort();
  const first = start(process.execPath, [...KOPEK, 'serve'], {
    ...embeddedEnv(dir, port),
    BILLING: 'off',
    NOTIFICATIONS: 'off',
  });
  await waitForBanner(first);
  process.kill(first.child.pid as number, 'SIGTERM');
  await first.exited;
  return dir;
}
