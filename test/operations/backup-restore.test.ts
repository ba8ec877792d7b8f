import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type Clock, ManualClock, systemClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { buildServices } from '../../src/compose/services.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { createShop } from '../../src/shops/service.js';
import { type BillStore, startBill } from '../billing/bill-store.js';
import { signedIn } from '../cabinet/session.js';
import { cleanUp, EMBEDDED_ONLY, seededDataDir } from '../foundation/kopek-process.js';
import { freshPostgres } from '../fresh-store.js';
import type { Harness, Sent, TestShop } from '../harness.js';
import { silentLog } from '../keys/store.js';
import { shopSigningKeys } from '../signing-keys.js';
import { card, customer } from '../subscriptions/helpers.js';

/**
 * The backup recipes of docs/operations.md ("Backups and restore"), run as written. On PostgreSQL: a
 * shop with customers, plans and subscriptions, `pg_dump -Fc` of its database, `pg_restore` into
 * another, empty one, and Kopek on the restored database with the same master key: the same rows,
 * the shop's key still opens the API and the cabinet, and billing carries on where the original
 * left off, charging each due period once. On the embedded store: DATA_DIR copied with tar while no
 * process has it open, and Kopek on the copy.
 */

const DAY_MS = 24 * 3600_000;
const run = promisify(execFile);

/** The newest PostgreSQL client tools on the machine: pg_dump must not be older than the server. */
function pgTool(name: 'pg_dump' | 'pg_restore'): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', name)))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] ? join(root, versions[0], 'bin', name) : name;
}

const databaseName = (url: string) => new URL(url).pathname.slice(1);

/** Kopek on a database, built by the composition root as `kopek serve` builds it (without listening). */
interface Instance {
  app: App;
  db: Db;
  close(): Promise<void>;
}

async function instance(url: string, masterKey: string, clock: Clock = systemClock): Promise<Instance> {
  const config = loadConfig({
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: '3',
    KOPEK_MASTER_KEY: masterKey,
    PUBLIC_URL: 'http://kopek.test',
    LOG_LEVEL: 'silent',
  });
  const built = await buildServices(config, { clock, log: silentLog });
  const app = await buildApp(built.services);
  await app.ready();
  return {
    app,
    db: built.services.db,
    close: async () => {
      await app.close();
      await built.close();
    },
  };
}

function api(app: App, shop: TestShop) {
  return async (method: 'GET' | 'POST', url: string, body?: unknown): Promise<Sent> => {
    const res = await app.inject({
      method,
      url,
      headers: {
        authorization: shop.auth,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers, text: res.body };
  };
}

/**
 * Every table of the database: its row count and a checksum of its rows in order, and where each
 * sequence stands; two databases with equal snapshots hold the same data.
 */
async function snapshot(db: Db): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await db.query<{ n: number; sum: string }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) AS sum
       FROM "${name}" t`,
    );
    out[name] = `${row?.n} rows, ${row?.sum}`;
  }
  const sequences = await db.query<{ name: string; at: string | null }>(
    `SELECT sequencename AS name, last_value::text AS at FROM pg_sequences
     WHERE schemaname = current_schema() ORDER BY sequencename`,
  );
  for (const s of sequences) out[`sequence ${s.name}`] = String(s.at);
  return out;
}

/** Successful payments per tracking id, and successful charge records per (subscription, period). */
async function chargedTwice(db: Db): Promise<string[]> {
  const payments = await db.query<{ v: string }>(
    `SELECT tracking_id AS v FROM transactions WHERE type = 'payment' AND status = 'successful'
     GROUP BY tracking_id HAVING count(*) > 1`,
  );
  const records = await db.query<{ v: string }>(
    `SELECT subscription_id || '-' || period AS v FROM subscription_charges WHERE status = 'successful'
     GROUP BY subscription_id, period HAVING count(*) > 1`,
  );
  return [...payments, ...records].map((r) => r.v);
}

/** What `kopek bill` needs of a database: its URL and the master key in its environment. */
const billTarget = (db: Db, url: string, masterKey: string): BillStore => ({
  db,
  url,
  masterKey,
  shopId: 0,
  drop: async () => {},
});

describe.skipIf(!process.env.DATABASE_URL)('a backup with pg_dump, restored with pg_restore', () => {
  const databases: string[] = [];
  const closing: (() => Promise<void>)[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'kopek-backup-'));

  afterAll(async () => {
    cleanUp();
    for (const close of closing.reverse()) await close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  });

  async function database(migrated: boolean) {
    const store = await freshPostgres({ migrated }, 3);
    databases.push(databaseName(store.url as string));
    closing.push(() => store.close());
    return store;
  }

  it('keeps every row, the shop, its key and its billing, given the same master key', async () => {
    const masterKey = randomBytes(32).toString('hex');

    // The original: a test shop whose subscriptions began 40 days ago (so a renewal is due now), 10
    // days ago (due in about 20 days), one in a 60-day free trial, and one cancelled.
    const original = await database(true);
    const now = systemClock.now().getTime();
    const clock = new ManualClock(new Date(now - 40 * DAY_MS));
    const before = await instance(original.url as string, masterKey, clock);
    closing.push(() => before.close());
    const { shop: row, secret } = await createShop(
      { db: before.db, clock, masterKey: Buffer.from(masterKey, 'hex'), signingKeys: shopSigningKeys },
      { name: 'Backed up', test: true },
    );
    const shop: TestShop = {
      shop: row,
      secret,
      auth: `Basic ${Buffer.from(`${row.id}:${secret}`).toString('base64')}`,
    };
    const call = api(before.app, shop);
    const gold = await call('POST', '/plans', {
      title: 'Gold',
      currency: 'EUR',
      plan: { amount: 1999, interval: 1, interval_unit: 'month' },
    });
    expect(gold.status, gold.text).toBe(201);
    const trialPlan = await call('POST', '/plans', {
      title: 'Silver with a trial',
      currency: 'EUR',
      plan: { amount: 999, interval: 1, interval_unit: 'month' },
      trial: { amount: 0, interval: 60, interval_unit: 'day' },
    });
    expect(trialPlan.status, trialPlan.text).toBe(201);
    const subscribe = async (plan: string, email: string) => {
      const who = await call('POST', '/customers', customer({ email }));
      expect(who.status, who.text).toBe(201);
      const sub = await call('POST', '/subscriptions', {
        plan: { id: plan },
        customer: { id: who.body.id },
        card: card(),
      });
      expect(sub.status, sub.text).toBe(201);
      return sub.body as { id: string; state: string; card: { stamp: string } };
    };
    const due = [
      await subscribe(gold.body.id, 'ann@example.com'),
      await subscribe(gold.body.id, 'bob@example.com'),
      await subscribe(gold.body.id, 'cid@example.com'),
    ];
    const trial = await subscribe(trialPlan.body.id, 'tia@example.com');
    expect(trial.state).toBe('trial');
    const cancelled = await subscribe(gold.body.id, 'cat@example.com');
    const cancel = await call('POST', `/subscriptions/${cancelled.id}/cancel`, {
      cancel_reason: 'Moved away',
    });
    expect(cancel.status, cancel.text).toBe(200);
    clock.set(new Date(now - 10 * DAY_MS));
    const recent = await subscribe(gold.body.id, 'rae@example.com');
    for (const s of [...due, recent]) expect(s.state).toBe('active');
    const atBackup = await snapshot(before.db);
    expect(atBackup.subscriptions).toMatch(/^6 rows/);
    // A charge record per first payment; the free trial's first period charged nothing.
    expect(atBackup.subscription_charges).toMatch(/^5 rows/);
    expect(atBackup.customers).toMatch(/^6 rows/);
    expect(atBackup.plans).toMatch(/^2 rows/);

    // The backup, and its restore into an empty database, as the recipe says.
    const dump = join(dir, 'kopek.dump');
    await run(pgTool('pg_dump'), ['--format=custom', `--file=${dump}`, `--dbname=${original.url}`]);
    await before.close();
    const restored = await database(false);
    await run(pgTool('pg_restore'), [
      '--exit-on-error',
      '--single-transaction',
      '--no-owner',
      `--dbname=${restored.url}`,
      dump,
    ]);
    expect(await snapshot(restored.db)).toEqual(atBackup);

    // Without the master key it was taken with, the backup's cards cannot be charged: `kopek bill`
    // under another key does not start, names the key the store needs, and changes nothing.
    const wrongKey = startBill(
      billTarget(restored.db, restored.url as string, randomBytes(32).toString('hex')),
    );
    const refused = await wrongKey.exited;
    expect(refused.code, wrongKey.output()).not.toBe(0);
    expect(wrongKey.output()).toMatch(
      /open none of the values sealed in this store \(sealed under master key [0-9a-f]{8}\).*Nothing was changed/,
    );
    expect(await snapshot(restored.db)).toEqual(atBackup);

    // `kopek bill` on the restored database, the same master key in its environment: the three
    // subscriptions due renew once, nothing else is charged.
    const bill = startBill(billTarget(restored.db, restored.url as string, masterKey));
    expect(await bill.summary()).toMatchObject({ charged: 3, successful: 3, failed: 0, errors: 0 });

    // Kopek serving the restored database: the shop's key opens the API, which reads the data.
    const after = await instance(restored.url as string, masterKey);
    closing.push(() => after.close());
    const read = api(after.app, shop);
    const list = await read('GET', '/subscriptions');
    expect(list.status, list.text).toBe(200);
    const byId = new Map<string, { state: string; paid_billing_cycles: number }>(
      (list.body as { id: string; state: string; paid_billing_cycles: number }[]).map((s) => [s.id, s]),
    );
    expect(byId.size).toBe(6);
    for (const s of due) expect(byId.get(s.id)).toMatchObject({ state: 'active', paid_billing_cycles: 2 });
    expect(byId.get(recent.id)).toMatchObject({ state: 'active', paid_billing_cycles: 1 });
    expect(byId.get(trial.id)).toMatchObject({ state: 'trial', paid_billing_cycles: 0 });
    expect(byId.get(cancelled.id)).toMatchObject({ state: 'canceled' });

    // A month on the shop's test clock: each subscription's next period once, the trial's end, and
    // nothing for the cancelled one.
    const advanced = await read('POST', '/test_clock/advance', { by: 'P1M' });
    expect(advanced.status, advanced.text).toBe(200);
    expect(advanced.body.billing).toMatchObject({ charged: 5, successful: 5, failed: 0, errors: 0 });
    // Billing again at the same moment finds nothing left to charge.
    const again = startBill(billTarget(restored.db, restored.url as string, masterKey));
    expect(await again.summary()).toMatchObject({ charged: 0, resolved: 0, ended: 0 });
    for (const s of due) {
      const got = await read('GET', `/subscriptions/${s.id}`);
      expect(got.body).toMatchObject({ state: 'active', paid_billing_cycles: 3 });
    }
    expect((await read('GET', `/subscriptions/${recent.id}`)).body).toMatchObject({ paid_billing_cycles: 2 });
    expect((await read('GET', `/subscriptions/${trial.id}`)).body).toMatchObject({
      state: 'active',
      paid_billing_cycles: 1,
    });
    expect((await read('GET', `/subscriptions/${cancelled.id}`)).body).toMatchObject({
      state: 'canceled',
      paid_billing_cycles: 1,
    });
    expect(await chargedTwice(restored.db)).toEqual([]);
    const [charges] = await restored.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM transactions WHERE shop_id = $1 AND type = 'payment' AND status = 'successful'`,
      [row.id],
    );
    // 5 first payments (the trial began free), 3 renewals after the restore, then 5 more.
    expect(charges?.n).toBe(5 + 3 + 5);

    // The same card on the restored store has the same stamp (its lookup key came with the dump,
    // opened by the same master key), and a new subscription gets a new row.
    const fresh = await read('POST', '/subscriptions', {
      plan: { id: gold.body.id },
      customer: customer({ email: 'new@example.com' }),
      card: card(),
    });
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.body.card.stamp).toBe(due[0]?.card.stamp);

    // The cabinet signs the shop in with its key and lists the restored subscriptions.
    const cabinet = await signedIn({ app: after.app } as Harness, shop);
    const page = await cabinet.get('/cabinet/subscriptions');
    expect(page.status).toBe(200);
    for (const s of [...due, trial, cancelled, recent]) expect(page.body).toContain(s.id);
  });
});

describe("a copy of the embedded store's DATA_DIR, taken while it is closed", EMBEDDED_ONLY, () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Kopek on DATA_DIR `dir` with its own key file, as `kopek serve` opens it (without listening). */
  async function embedded(dir: string, clock: Clock = systemClock) {
    const config = loadConfig({ DATA_DIR: dir, PUBLIC_URL: 'http://kopek.test', LOG_LEVEL: 'silent' });
    const built = await buildServices(config, { clock, log: silentLog });
    const app = await buildApp(built.services);
    await app.ready();
    return {
      app,
      built,
      close: async () => {
        await app.close();
        await built.close();
      },
    };
  }

  it('opens with its key file, its shop and its subscription, and bills on', async () => {
    const dir = await seededDataDir('kopek-embedded-backup-');
    dirs.push(dir);
    const clock = new ManualClock(new Date(systemClock.now().getTime() - 40 * DAY_MS));
    const before = await embedded(dir, clock);
    expect(before.built.generatedKeyAt).toBe(join(dir, 'master.key'));
    const { shop: row, secret } = await createShop(
      { ...before.built.services, signingKeys: shopSigningKeys },
      { name: 'Embedded', test: true },
    );
    const shop: TestShop = {
      shop: row,
      secret,
      auth: `Basic ${Buffer.from(`${row.id}:${secret}`).toString('base64')}`,
    };
    const created = await api(before.app, shop)('POST', '/subscriptions', {
      plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
      customer: customer(),
      card: card(),
    });
    expect(created.status, created.text).toBe(201);
    // Stopped: the lock is released and the files are still.
    await before.close();

    const backups = mkdtempSync(join(tmpdir(), 'kopek-embedded-copy-'));
    dirs.push(backups);
    const tar = join(backups, 'kopek-data.tar');
    await run('tar', ['-C', dirname(dir), '-cpf', tar, basename(dir)]);
    const restoredAt = join(backups, 'restored');
    mkdirSync(restoredAt, { mode: 0o700 });
    await run('tar', ['-C', restoredAt, '-xpf', tar]);
    const copy = join(restoredAt, basename(dir));
    expect(readFileSync(join(copy, 'master.key'), 'utf8')).toBe(
      readFileSync(join(dir, 'master.key'), 'utf8'),
    );
    expect(statSync(copy).mode & 0o777).toBe(0o700);
    expect(statSync(join(copy, 'master.key')).mode & 0o777).toBe(0o600);

    const after = await embedded(copy);
    try {
      expect(after.built.generatedKeyAt).toBeUndefined();
      const read = api(after.app, shop);
      const got = await read('GET', `/subscriptions/${created.body.id}`);
      expect(got.status, got.text).toBe(200);
      expect(got.body).toMatchObject({ state: 'active', paid_billing_cycles: 1 });
      // Its renewal fell due ten days ago: a moment on the shop's clock bills it, once.
      const advanced = await read('POST', '/test_clock/advance', { by: 'PT1M' });
      expect(advanced.status, advanced.text).toBe(200);
      expect(advanced.body.billing).toMatchObject({ charged: 1, successful: 1 });
      expect((await read('GET', `/subscriptions/${created.body.id}`)).body).toMatchObject({
        paid_billing_cycles: 2,
      });
    } finally {
      await after.close();
    }
  });
});
