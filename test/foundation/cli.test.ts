import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/run.js';
import { ManualClock } from '../../src/clock.js';
import { loadMigrations } from '../../src/db/migrate.js';
import { type CliRun, runKopek } from '../cli/run-cli.js';
import { client, harness, newShop } from '../harness.js';
import { type FreshStore, freshStore } from '../keys/store.js';

/**
 * The CLI's commands, run in this process on a store of the file's own, bare at first: `migrate`
 * applies every migration to it, and `bill` finds nothing of other files' to bill.
 */

let store: FreshStore;
let deps: CliDeps;
const dirs: string[] = [];
const ENV = { PUBLIC_URL: 'http://cli.kopek.test', LOG_LEVEL: 'warn' };

function kopek(...args: string[]): Promise<CliRun> {
  return runKopek(deps, ENV, ...args);
}

/** The CLI on the embedded store in `dir`, as the environment names it. */
function kopekIn(dir: string, args: string[]): Promise<CliRun> {
  return runKopek(undefined, { ...ENV, DATA_DIR: dir }, ...args);
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-cli-'));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  store = await freshStore({ migrated: false });
  deps = { db: store.db, clock: new ManualClock(), masterKey: randomBytes(32) };
});

afterAll(async () => {
  await store?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('kopek CLI', () => {
  const secret = randomBytes(32).toString('hex');

  it('migrate applies every migration to a fresh store and exits 0', async () => {
    const run = await kopek('migrate');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `Applied: ${loadMigrations()
        .map((m) => m.name)
        .join(', ')}`,
    );
  });

  it('shop create prints the id, the secret and the public key; shop list then lists it', async () => {
    const created = await kopek(
      'shop',
      'create',
      '--id',
      '4242',
      '--secret',
      secret,
      '--3ds',
      '--test',
      '--name',
      'X',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/Shop id:\s+4242 \(test\) \(3-D Secure on\)/);
    expect(created.stdout).toContain(`Secret key:  ${secret}`);
    expect(created.stdout).toContain('-----BEGIN PUBLIC KEY-----');
    expect(created.stdout).toContain('-----END PUBLIC KEY-----');
    expect(created.stdout).toContain(`curl -u 4242:${secret} `);
    expect(created.stdout).toContain('http://cli.kopek.test/customers');

    const listed = await kopek('shop', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^4242\tX\t\(test, 3ds\)\tcreated \d{4}-\d\d-\d\dT/m);
    // The secret is shown once, at creation, never again.
    expect(listed.stdout).not.toContain(secret);
  });

  it('refuses a second shop with the same id, saying so', async () => {
    const run = await kopek('shop', 'create', '--id', '4242', '--secret', randomBytes(32).toString('hex'));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('a shop with id 4242 already exists');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a short secret and a non-numeric id before touching the store', async () => {
    const untouched = join(tempDir(), 'never-created');
    const short = await kopekIn(untouched, ['shop', 'create', '--secret', 'short']);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain('--secret must be 64 hexadecimal characters');
    const weak = await kopekIn(untouched, ['shop', 'create', '--secret', 'ab'.repeat(32)]);
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toContain('--secret is too weak: its 32 bytes hold only 1 different values');
    expect(weak.stderr).not.toMatch(/\n\s+at /);

    const id = await kopekIn(untouched, ['shop', 'create', '--id', 'abc']);
    expect(id.code).not.toBe(0);
    expect(id.stderr).toContain('--id must be a whole number');
    expect(existsSync(untouched)).toBe(false);
  });

  it('shop list in a DATA_DIR without a store lists nothing, and creates no store to find that out', async () => {
    const dir = tempDir();
    const run = await kopekIn(dir, ['shop', 'list']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('No shops yet. Create one (its secret key is printed once) with:');
    // No store, no master key, and the lock it held while looking is gone.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('migrate on an up-to-date store says so and exits 0', async () => {
    const run = await kopek('migrate');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Nothing to apply; the schema is up to date.');
  });

  it('bill runs what is due once, says what it did and exits 0', async () => {
    const run = await kopek('bill');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^Billed: 0 charge attempts \(0 successful, 0 failed, 0 error, 0 unknown\); 0 open attempts resolved; 0 subscriptions ended/,
    );
  });

  it('an unknown command or option exits non-zero with the usage', async () => {
    const bogus = await kopek('bogus');
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('Unknown command: bogus');
    expect(bogus.stderr).toContain('Usage: kopek <command>');

    const option = await kopek('shop', 'create', '--colour', 'red');
    expect(option.code).not.toBe(0);
    expect(option.stderr).toContain("Unknown option '--colour'");
    expect(option.stderr).toContain('Usage: kopek <command>');
  });
});

describe('a shop with a chosen id and secret', () => {
  it('authenticates over HTTP with that secret, and only with it', async () => {
    const h = await harness();
    const secret = randomBytes(32).toString('hex').toUpperCase();
    const id = randomInt(1_000_000, 2_000_000_000);
    const shop = await newShop(h, { id, secret, threeDs: true });
    expect(shop.shop.id).toBe(id);
    expect(shop.shop.threeDs).toBe(true);
    // The secret is kept in lower case; that is what the shop is told and what authenticates.
    expect(shop.secret).toBe(secret.toLowerCase());
    const ok = await client(h, shop).get('/customers');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual([]);

    const wrong = await client(h, {
      ...shop,
      auth: `Basic ${Buffer.from(`${id}:${'0'.repeat(64)}`).toString('base64')}`,
    }).get('/customers');
    expect(wrong.status).toBe(401);
  });
});
