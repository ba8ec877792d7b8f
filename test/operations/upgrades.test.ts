import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../src/clock.js';
import { buildServices } from '../../src/compose/services.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import {
  loadMigrations,
  type Migration,
  migrate,
  SchemaBehindError,
  schemaState,
} from '../../src/db/migrate.js';
import { createShop } from '../../src/shops/service.js';
import { runKopek } from '../cli/run-cli.js';
import {
  cleanUp,
  embeddedEnv,
  freePort,
  KOPEK,
  type Started,
  start,
  waitForBanner,
} from '../foundation/kopek-process.js';
import { type FreshStore, freshPglite, freshPostgres, freshStore, untarDataDir } from '../fresh-store.js';
import { silentLog } from '../keys/store.js';
import { shopSigningKeys } from '../signing-keys.js';
import { card, customer, monthly } from '../subscriptions/helpers.js';

/**
 * Upgrades while older instances still run (docs/operations.md, "Upgrades"): an instance on a schema
 * that a newer release migrated further keeps serving and says so; one on a schema older than it
 * knows brings it up to date before serving, or, when its database role may not change the schema,
 * refuses with what to do. Each pass of the suite runs them on its own kind of store.
 */

const onPostgres = Boolean(process.env.DATABASE_URL);
const ALL = loadMigrations();
const LAST = ALL.at(-1) as Migration;

/** What a later release might add: a column with a default, a table, an index; nothing taken away. */
const NEWER: Migration = {
  version: 990,
  name: '990_a_later_release',
  sql: `ALTER TABLE subscriptions ADD COLUMN later_note text NOT NULL DEFAULT '';
    CREATE TABLE later_things (id bigint PRIMARY KEY, subscription_id text NOT NULL);
    CREATE INDEX later_things_subscription ON later_things (subscription_id);`,
};

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  cleanUp();
  for (const c of cleanups.reverse()) await c();
});

async function fresh(migrated = true): Promise<FreshStore> {
  const store = await freshStore({ migrated });
  cleanups.push(() => store.close());
  return store;
}

/** The last migration shipped before the rule that migrations only add (docs/operations.md, "Upgrades"). */
const ADDITIVE_FROM = 33;

/**
 * What a migration may not do while the previous release still runs on the schema: take away or
 * change a column or table it uses, or make its inserts fail (a NOT NULL column without a default).
 */
function contractsOf(sql: string): string[] {
  const text = sql.replace(/--.*$/gm, '');
  const found = [
    ...text.matchAll(
      /\b(DROP\s+(COLUMN|TABLE)|RENAME\b|ALTER\s+COLUMN\s+\w+\s+(SET\s+NOT\s+NULL|(SET\s+DATA\s+)?TYPE))/gi,
    ),
  ].map((m) => m[0]);
  for (const [clause] of text.matchAll(/ADD\s+COLUMN[^,;]*/gi))
    if (/\bNOT\s+NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause)) found.push(clause.trim());
  return found;
}

describe('the shipped migrations', () => {
  it(`only add from ${ADDITIVE_FROM} on, or say why the release before them keeps working`, () => {
    // The check sees what the older, non-additive migrations did.
    const old = (name: string) => contractsOf(ALL.find((m) => m.name === name)?.sql ?? '');
    expect(old('012_billing')).toContain('DROP COLUMN');
    expect(old('024_delivery_queue')).toContain('DROP COLUMN');
    expect(contractsOf('ALTER TABLE t ADD COLUMN n integer NOT NULL;')).toHaveLength(1);
    expect(contractsOf(NEWER.sql)).toEqual([]);
    for (const m of ALL.filter((m) => m.version >= ADDITIVE_FROM))
      if (contractsOf(m.sql).length > 0)
        expect(m.sql, `${m.name}: ${contractsOf(m.sql).join('; ')}`).toMatch(/^-- contract: \S/m);
  });
});

describe('an instance whose release is older than the schema', () => {
  /**
   * A store a newer release migrated (NEWER on top of every migration of this one) with a test shop,
   * and the environment of a `kopek serve` of this release on it: PostgreSQL with DATABASE_URL, else
   * an embedded store in a DATA_DIR of its own.
   */
  async function newerStore(port: number) {
    const masterKey = randomBytes(32).toString('hex');
    let db: Db;
    let env: NodeJS.ProcessEnv;
    let toDir = async () => {};
    if (onPostgres) {
      const store = await freshPostgres({}, 2);
      cleanups.push(() => store.close());
      db = store.db;
      env = { ...embeddedEnv('', port), DATABASE_URL: store.url, KOPEK_MASTER_KEY: masterKey };
      delete env.DATA_DIR;
    } else {
      // In memory, written out as a DATA_DIR once ready: quicker than a store opened on the files.
      const dir = mkdtempSync(join(tmpdir(), 'kopek-upgrade-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const lite = await freshPglite();
      db = lite;
      env = { ...embeddedEnv(dir, port), KOPEK_MASTER_KEY: masterKey };
      toDir = async () => {
        untarDataDir(Buffer.from(await (await lite.dumpDataDir()).arrayBuffer()), join(dir, 'pglite'));
        await lite.close();
      };
    }
    expect(await migrate(db, [...ALL, NEWER])).toEqual([NEWER.name]);
    const { shop, secret } = await createShop(
      { db, clock: systemClock, masterKey: Buffer.from(masterKey, 'hex'), signingKeys: shopSigningKeys },
      { name: 'Upgraded', test: true },
    );
    // The embedded store, written out for the server (PostgreSQL needs nothing).
    await toDir();
    return { db, env, auth: `Basic ${Buffer.from(`${shop.id}:${secret}`).toString('base64')}` };
  }

  it('starts, says the schema is newer, and serves and bills on it', async () => {
    const port = await freePort();
    const { env, auth } = await newerStore(port);
    const server: Started = start(process.execPath, [...KOPEK, 'serve'], env);
    cleanups.push(async () => {
      if (server.child.exitCode === null) server.child.kill('SIGTERM');
      await server.exited;
    });
    await waitForBanner(server);
    const warning = server
      .output()
      .split('\n')
      .find((l) => l.includes('migrations of a newer Kopek release'));
    expect(warning, server.output()).toBeDefined();
    expect(JSON.parse(warning as string)).toMatchObject({ level: 40, migrations: [NEWER.name] });

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const created = await api('POST', '/subscriptions', {
      plan: monthly(),
      customer: customer(),
      card: card(),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.state).toBe('active');
    // A month on the shop's clock: its renewal, charged once.
    const advanced = await api('POST', '/test_clock/advance', { by: 'P1M' });
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect(advanced.body.billing).toMatchObject({ charged: 1, successful: 1 });
    const read = await api('GET', `/subscriptions/${created.body.id}`);
    expect(read.body).toMatchObject({ state: 'active', paid_billing_cycles: 2 });

    server.child.kill('SIGTERM');
    expect((await server.exited).code, server.output()).toBe(0);
    expect(server.output()).not.toMatch(/"level":50/);
  });

  it('kopek migrate of the older release applies nothing and names the newer migrations', async () => {
    const store = await fresh();
    expect(await migrate(store.db, [...ALL, NEWER])).toEqual([NEWER.name]);
    const run = await runKopek(
      { db: store.db, clock: new ManualClock(), masterKey: randomBytes(32) },
      { LOG_LEVEL: 'warn' },
      'migrate',
    );
    expect(run.code, run.output).toBe(0);
    expect(run.stdout).toContain('Nothing to apply; the schema is up to date.');
    expect(run.stdout).toContain(`The schema also has migrations of a newer Kopek release: ${NEWER.name}.`);
    expect(await schemaState(store.db)).toEqual({ pending: [], newer: [NEWER.name] });
  });
});

describe('an instance whose release is newer than the schema', () => {
  it('applies what is missing before it serves', async () => {
    const store = await fresh(false);
    await migrate(store.db, ALL.slice(0, -1));
    expect((await schemaState(store.db)).pending.map((m) => m.name)).toEqual([LAST.name]);
    const masterKey = randomBytes(32);
    const built = await buildServices(loadConfig({ KOPEK_MASTER_KEY: masterKey.toString('hex') }), {
      db: store.db,
      migrate: true,
      masterKey,
      log: silentLog,
    });
    await built.close();
    expect(built).toMatchObject({ applied: [LAST.name], newer: [] });
    expect(await schemaState(store.db)).toEqual({ pending: [], newer: [] });
  });
});

/**
 * A deployment whose instances connect as a role that may read and write the tables but not change
 * the schema, the migrations running as the database's owner (`kopek migrate` as a one-shot job).
 */
describe.skipIf(!onPostgres)('instances whose database role may not change the schema', () => {
  const role = `kopek_t_app_${randomBytes(4).toString('hex')}`;
  const admin = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const databases: string[] = [];

  afterAll(async () => {
    await admin(process.env.DATABASE_URL as string, async (c) => {
      for (const name of databases) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${role}`);
    });
  });

  /** A database of its own, migrated up to `upTo`, on which `role` may use the tables the owner makes. */
  async function database(upTo: Migration[]) {
    const store = await freshPostgres({ migrated: false }, 2);
    cleanups.push(() => store.close());
    const url = store.url as string;
    databases.push(new URL(url).pathname.slice(1));
    await migrate(store.db, upTo);
    await admin(url, async (c) => {
      await c.query(
        `DO $$ BEGIN CREATE ROLE ${role} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
      );
      await c.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
      await c.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await c.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      await c.query(
        `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role}`,
      );
      await c.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${role}`);
    });
    const asRole = new URL(url);
    asRole.username = role;
    return { db: store.db, ownerUrl: url, roleUrl: asRole.toString() };
  }

  const env = (url: string, masterKey: string) => ({
    DATABASE_URL: url,
    KOPEK_MASTER_KEY: masterKey,
    LOG_LEVEL: 'warn',
  });

  it('run on a schema kopek migrate brought up to date, changing nothing', async () => {
    const { db, ownerUrl, roleUrl } = await database(ALL);
    const masterKey = randomBytes(32).toString('hex');
    const created = await runKopek(undefined, env(ownerUrl, masterKey), 'shop', 'create', '--test');
    expect(created.code, created.output).toBe(0);
    // The instance's own start (the composition root, as `kopek serve`), and a command.
    const built = await buildServices(loadConfig(env(roleUrl, masterKey)), { log: silentLog });
    expect(built).toMatchObject({ applied: [], newer: [] });
    await built.close();
    const bill = await runKopek(undefined, env(roleUrl, masterKey), 'bill');
    expect(bill.code, bill.output).toBe(0);
    const listed = await runKopek(undefined, env(roleUrl, masterKey), 'shop', 'list');
    expect(listed.code, listed.output).toBe(0);
    expect(listed.stdout).toMatch(/\tSandbox shop\t\(test\)/);
    expect(await schemaState(db)).toEqual({ pending: [], newer: [] });
  });

  it('refuse a schema older than their release, saying to run kopek migrate; run once it has', async () => {
    const { db, ownerUrl, roleUrl } = await database(ALL.slice(0, -1));
    const masterKey = randomBytes(32).toString('hex');
    const config = loadConfig(env(roleUrl, masterKey));
    const refused = buildServices(config, { log: silentLog });
    await expect(refused).rejects.toThrow(SchemaBehindError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `The database schema is older than this Kopek: ${LAST.name} is not applied.*Run \`kopek migrate\``,
      ),
    );
    const bill = await runKopek(undefined, env(roleUrl, masterKey), 'bill');
    expect(bill.code).toBe(1);
    expect(bill.stderr).toMatch(/^The database schema is older than this Kopek: .*permission denied/);
    expect(bill.stderr).not.toMatch(/\n\s+at /);
    expect((await schemaState(db)).pending.map((m) => m.name)).toEqual([LAST.name]);

    const migrated = await runKopek(undefined, env(ownerUrl, masterKey), 'migrate');
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.stdout).toContain(`Applied: ${LAST.name}`);
    const again = await runKopek(undefined, env(roleUrl, masterKey), 'bill');
    expect(again.code, again.output).toBe(0);
  });
});
