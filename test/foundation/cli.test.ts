import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/db/migrate.js';
import { client, harness, newShop } from '../harness.js';
import { EMBEDDED_ONLY, KOPEK } from './kopek-process.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dataDir: string;

/** Runs the real CLI against an embedded store in a throw-away DATA_DIR, whatever the test run uses. */
function kopek(...args: string[]): Promise<Run> {
  return kopekIn(dataDir, args);
}

function kopekIn(dir: string, args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dir,
    LOG_LEVEL: 'warn',
    PUBLIC_URL: 'http://cli.kopek.test',
  };
  delete env.DATABASE_URL;
  delete env.KOPEK_MASTER_KEY;
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...KOPEK, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'kopek-cli-'));
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('kopek CLI', { timeout: 120_000, ...EMBEDDED_ONLY }, () => {
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
    const untouched = join(dataDir, 'never-created');
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
