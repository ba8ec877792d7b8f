import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, pgErrorCode } from '../../src/db/db.js';
import { loadMigrations, type Migration, migrate } from '../../src/db/migrate.js';
import { hasSuccessfulCharge } from '../../src/gateway/repository.js';
import { freshPglite, freshPostgres } from '../fresh-store.js';

interface Store {
  /** A store of its own that has never seen a migration (test/fresh-store.ts: a copy, not a creation). */
  open(): Promise<Db>;
  cleanup(): Promise<void>;
}

function storeOf(make: () => Promise<{ db: Db; close(): Promise<void> }>): Store {
  const opened: { close(): Promise<void> }[] = [];
  return {
    async open() {
      const store = await make();
      opened.push(store);
      return store.db;
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.close()));
    },
  };
}

const pgliteStore = () =>
  storeOf(async () => {
    const db = await freshPglite({ migrated: false });
    return { db, close: () => db.close() };
  });
const postgresStore = () => storeOf(() => freshPostgres({ migrated: false }, 4));

async function tableExists(db: Db, name: string): Promise<boolean> {
  const [row] = await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name]);
  return row?.t != null;
}

async function recorded(db: Db): Promise<number[]> {
  const rows = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}

const stores: [string, () => Store][] = [['PGlite', pgliteStore]];
if (process.env.DATABASE_URL) stores.push(['PostgreSQL', postgresStore]);

describe('the shipped migrations', () => {
  it('are numbered, named and in order', () => {
    const all = loadMigrations();
    expect(all.length).toBeGreaterThan(0);
    expect(all[0]?.version).toBe(1);
    const versions = all.map((m) => m.version);
    expect(new Set(versions).size).toBe(versions.length);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    for (const m of all) expect(m.name).toMatch(/^\d{3}_[\w-]+$/);
  });
});

describe.each(stores)('migrate() on %s', { timeout: 120_000 }, (name, makeStore) => {
  let store: Store;
  let db: Db;

  beforeAll(async () => {
    store = makeStore();
    db = await store.open();
  });

  afterAll(async () => {
    await store?.cleanup();
  });

  it('applies every migration on a fresh store, then nothing on a second run', async () => {
    const all = loadMigrations();
    const applied = await migrate(db);
    expect(applied).toEqual(all.map((m) => m.name));
    expect(await recorded(db)).toEqual(all.map((m) => m.version));
    for (const table of ['shops', 'idempotency_keys', 'customers'])
      expect(await tableExists(db, table)).toBe(true);

    expect(await migrate(db)).toEqual([]);
    expect(await recorded(db)).toEqual(all.map((m) => m.version));
  });

  it('rolls back a failing migration completely, keeps the good ones and stops the run', async () => {
    const custom: Migration[] = [
      { version: 901, name: '901_good', sql: 'CREATE TABLE mig_good (id integer PRIMARY KEY);' },
      {
        version: 902,
        name: '902_bad',
        // The first statement succeeds; the second fails: nothing of the first may remain.
        sql: 'CREATE TABLE mig_bad (id integer);\nINSERT INTO mig_good VALUES (1);\nSELEC broken;',
      },
      { version: 903, name: '903_after', sql: 'CREATE TABLE mig_after (id integer);' },
    ];
    await expect(migrate(db, custom)).rejects.toThrow(/syntax error/);

    expect(await tableExists(db, 'mig_good')).toBe(true);
    expect(await db.query('SELECT * FROM mig_good')).toEqual([]);
    expect(await tableExists(db, 'mig_bad')).toBe(false);
    expect(await tableExists(db, 'mig_after')).toBe(false);
    const versions = await recorded(db);
    expect(versions).toContain(901);
    expect(versions).not.toContain(902);
    expect(versions).not.toContain(903);

    // Once the bad one is fixed, the run picks up where it stopped.
    const fixed = custom.map((m) =>
      m.version === 902 ? { ...m, sql: 'CREATE TABLE mig_bad (id integer);' } : m,
    );
    expect(await migrate(db, fixed)).toEqual(['902_bad', '903_after']);
    expect(await tableExists(db, 'mig_bad')).toBe(true);
    expect(await tableExists(db, 'mig_after')).toBe(true);
  });

  it('keeps what the sandbox remembers of a card across the move to 008_lean_indexes', async () => {
    // A store at 007 with an approved charge of the first-then-declined card, made before charges
    // were marked: after 008 that card is still remembered, so its next charge is declined.
    const fresh = await store.open();
    const all = loadMigrations();
    await migrate(
      fresh,
      all.filter((m) => m.version < 8),
    );
    const card = (last4: string) => JSON.stringify({ bin: '400000', last_4: last4, stamp: `stamp-${last4}` });
    const [shop] = await fresh.query<{ id: number }>(
      `INSERT INTO shops (name, secret_hash, test, public_key, private_key_enc, created_at)
       VALUES ('Before 008', 'x', true, 'pk', 'sk', now()) RETURNING id`,
    );
    const shopId = shop?.id as number;
    for (const [uid, last4] of [
      ['00000000-0000-4000-8000-000000000226', '0226'],
      ['00000000-0000-4000-8000-000000000000', '0000'],
    ] as const) {
      await fresh.query(
        `INSERT INTO transactions (uid, shop_id, type, status, amount, currency, test, card, created_at, updated_at)
         VALUES ($1, $2, 'payment', 'successful', 100, 'EUR', true, $3, now(), now())`,
        [uid, shopId, card(last4)],
      );
    }
    await migrate(fresh, all);
    expect(await hasSuccessfulCharge(fresh, shopId, 'stamp-0226')).toBe(true);
    expect(await hasSuccessfulCharge(fresh, shopId, 'stamp-0000')).toBe(false);
  });

  it('moves a store to 010_database_guards only when its rows keep the rules; then parents stay', async () => {
    const fresh = await store.open();
    const all = loadMigrations();
    const before = all.filter((m) => m.version < 10);
    await migrate(fresh, before);
    const [shop] = await fresh.query<{ id: number }>(
      `INSERT INTO shops (name, secret_hash, test, public_key, private_key_enc, created_at)
       VALUES ('Before 010', 'x', true, 'pk', 'sk', now()) RETURNING id`,
    );
    const shopId = shop?.id as number;
    await fresh.query(
      `INSERT INTO plans (id, shop_id, title, currency, amount, "interval", interval_unit, language, infinite,
         number_payment_attempts, test, created_at, updated_at)
       VALUES ('pln_before', $1, 'Gold', 'EUR', 1999, 1, 'month', 'en', true, 3, true, now(), now())`,
      [shopId],
    );
    await fresh.query(
      `INSERT INTO customers (id, shop_id, email, ip, created_at)
       VALUES ('cst_before', $1, 'jane@example.com', '203.0.113.7', now())`,
      [shopId],
    );
    await fresh.query(
      `INSERT INTO cards (token, shop_id, number_enc, stamp, brand, first_1, last_4, bin, holder, exp_month,
         exp_year, created_at, updated_at)
       VALUES ('tok_before', $1, 'sealed', 'stamp', 'visa', '4', '0000', '420000', 'JANE DOE', 12, 2030, now(), now())`,
      [shopId],
    );
    const broken = '00000000-0000-4000-8000-000000000010';
    await fresh.query(
      `INSERT INTO transactions (uid, shop_id, type, status, amount, currency, test, created_at, updated_at)
       VALUES ($1, $2, 'payment', 'approved', 1999, 'EUR', true, now(), now())`,
      [broken, shopId],
    );

    // A row no version of Kopek writes is damage: 010 stops, names the rule, and leaves nothing behind.
    await expect(migrate(fresh, all)).rejects.toThrow(/transactions_status_check/);
    expect(await recorded(fresh)).toEqual(before.map((m) => m.version));
    const [left] = await fresh.query<{ constraints: number; triggers: number }>(
      `SELECT (SELECT count(*)::int FROM pg_constraint
                WHERE conrelid = 'transactions'::regclass AND conname = 'transactions_type_check') AS constraints,
              (SELECT count(*)::int FROM pg_trigger WHERE tgrelid = 'shops'::regclass AND NOT tgisinternal) AS triggers`,
    );
    expect(left).toEqual({ constraints: 0, triggers: 0 });

    await fresh.query("UPDATE transactions SET status = 'failed' WHERE uid = $1", [broken]);
    expect(await migrate(fresh, all)).toEqual(all.filter((m) => m.version >= 10).map((m) => m.name));

    // On a store of its own: TRUNCATE locks the whole table, which tests on the shared store would feel.
    for (const table of ['shops', 'plans', 'customers', 'cards']) {
      const err = await fresh.query(`TRUNCATE ${table}`).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect({ code: pgErrorCode(err), constraint: (err as { constraint?: string })?.constraint }).toEqual({
        code: '23001',
        constraint: `${table}_never_truncated`,
      });
      const [count] = await fresh.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      expect(count?.n, table).toBe(1);
    }
  });

  // Only PostgreSQL has several connections (instances); PGlite's single connection queues the runs.
  it.runIf(name === 'PostgreSQL')('lets several instances migrate one fresh store at once', async () => {
    // The pool gives each run its own connection, as instances starting together would have.
    const fresh = await store.open();
    const results = await Promise.all([migrate(fresh), migrate(fresh), migrate(fresh)]);
    const all = loadMigrations().map((m) => m.name);
    expect(results.flat().sort()).toEqual([...all].sort());
    expect(await recorded(fresh)).toEqual(loadMigrations().map((m) => m.version));
  });

  it('keeps every notification, its state and its attempts across the move to 024_delivery_queue', async () => {
    // A store at 023: notifications pending (one held by a deliverer), delivered, failed after a
    // resend, and an event kept for the record without a URL.
    const fresh = await store.open();
    const all = loadMigrations();
    await migrate(
      fresh,
      all.filter((m) => m.version < 24),
    );
    const [shop] = await fresh.query<{ id: number }>(
      `INSERT INTO shops (name, secret_hash, test, public_key, private_key_enc, created_at)
       VALUES ('Before 024', 'x', true, 'pk', 'sk', now()) RETURNING id`,
    );
    const shopId = shop?.id as number;
    const at = new Date('2026-05-01T10:00:00Z');
    const later = new Date('2026-05-01T10:05:00Z');
    const rows: [string, string | null, string, number, Date | null, Date | null, Date | null, number][] = [
      // resource, url, status, attempts, next_attempt_at, delivered_at, leased_until, series_from
      ['sbs_a', 'http://shop.test/a', 'pending', 0, at, null, null, 0],
      ['sbs_a', 'http://shop.test/a', 'pending', 2, later, null, later, 0],
      ['sbs_b', 'http://shop.test/b', 'delivered', 1, null, later, null, 0],
      ['sbs_c', 'http://shop.test/c', 'failed', 20, null, null, null, 17],
      ['sbs_d', null, 'none', 0, null, null, null, 0],
    ];
    const ids: number[] = [];
    for (const [resource, url, status, attempts, next, delivered, leased, series] of rows) {
      const [row] = await fresh.query<{ id: number }>(
        `INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url, status,
           attempts, next_attempt_at, delivered_at, leased_until, series_from, mail_status)
         VALUES ($1, 'subscription', $2, 'renewed.subscription', $3, $4, $5, $6, $7, $8, $9, $10, $11, 'done')
         RETURNING id`,
        [
          shopId,
          resource,
          JSON.stringify({ id: resource }),
          at,
          url,
          status,
          attempts,
          next,
          delivered,
          leased,
          series,
        ],
      );
      ids.push(Number(row?.id));
    }
    await fresh.query(
      `INSERT INTO event_attempts (event_id, n, at, status_code, duration_ms, response)
       VALUES ($1, 1, $2, 200, 5, 'ok')`,
      [ids[2], later],
    );
    await migrate(fresh, all);

    const deliveries = await fresh.query(
      `SELECT event_id::int, shop_id, resource_id, status, attempts, next_attempt_at, delivered_at,
         leased_until, series_from FROM deliveries ORDER BY event_id`,
    );
    expect(deliveries).toEqual(
      rows.slice(0, 4).map(([resource, , status, attempts, next, delivered, leased, series], i) => ({
        event_id: ids[i],
        shop_id: shopId,
        resource_id: resource,
        status,
        attempts,
        next_attempt_at: next,
        delivered_at: delivered,
        leased_until: leased,
        series_from: series,
      })),
    );
    // The events keep what they announced; their attempts now belong to the deliveries.
    const events = await fresh.query<{ id: number; url: string | null; payload: unknown }>(
      'SELECT id::int, url, payload FROM events ORDER BY id',
    );
    expect(events.map((e) => [e.id, e.url, e.payload])).toEqual(
      rows.map(([resource, url], i) => [ids[i], url, { id: resource }]),
    );
    expect(await fresh.query('SELECT event_id::int, n, status_code FROM event_attempts')).toEqual([
      { event_id: ids[2], n: 1, status_code: 200 },
    ]);
    const columns = await fresh.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = 'events'`,
    );
    expect(columns.map((c) => c.name)).not.toContain('status');
    // An attempt for an event without a delivery is refused.
    await expect(
      fresh.query(
        `INSERT INTO event_attempts (event_id, n, at, duration_ms, shop_id) VALUES ($1, 1, now(), 1, $2)`,
        [ids[4], shopId],
      ),
    ).rejects.toThrow(/foreign key/);
  });

  it('gives every shop at 025 notification_auth basic and no webhook secret yet (made on first use)', async () => {
    const fresh = await store.open();
    const all = loadMigrations();
    await migrate(
      fresh,
      all.filter((m) => m.version < 26),
    );
    await fresh.query(
      `INSERT INTO shops (name, secret_hash, test, public_key, private_key_enc, created_at, secret_enc)
       VALUES ('Before 026', 'x', false, 'pk', 'sk', now(), 'sealed')`,
    );
    await migrate(fresh, all);
    expect(
      await fresh.query(
        `SELECT notification_auth, webhook_secret_enc, webhook_secret_prev_enc, webhook_secret_prev_until,
           pending_public_key, pending_private_key_enc, public_key, private_key_enc, secret_enc FROM shops`,
      ),
    ).toEqual([
      {
        notification_auth: 'basic',
        webhook_secret_enc: null,
        webhook_secret_prev_enc: null,
        webhook_secret_prev_until: null,
        pending_public_key: null,
        pending_private_key_enc: null,
        public_key: 'pk',
        private_key_enc: 'sk',
        secret_enc: 'sealed',
      },
    ]);
    await expect(fresh.query(`UPDATE shops SET notification_auth = 'none'`)).rejects.toThrow(/check/);
  });

  it('gives the rows of 032 their shop (033): history, charges, attempts, and a document per shop', async () => {
    const fresh = await store.open();
    const all = loadMigrations();
    await migrate(
      fresh,
      all.filter((m) => m.version < 33),
    );
    const shop = async (name: string) => {
      const [row] = await fresh.query<{ id: number }>(
        `INSERT INTO shops (name, secret_hash, public_key, private_key_enc, created_at)
         VALUES ($1, 'x', 'pk', 'sk', now()) RETURNING id`,
        [name],
      );
      return row?.id as number;
    };
    const [a, b] = [await shop('A'), await shop('B')];
    const checksum = 'ab'.repeat(32);
    await fresh.query(
      `INSERT INTO proof_documents (checksum, content, content_type, size, created_at)
       VALUES ($1, '\\x25504446', 'application/pdf', 4, now())`,
      [checksum],
    );
    for (const [shopId, n] of [
      [a, 1],
      [b, 2],
    ] as const) {
      const pay = `00000000-0000-4000-8000-00000000000${n}`;
      const proof = `00000000-0000-4000-8000-00000000001${n}`;
      await fresh.query(
        `INSERT INTO transactions (uid, shop_id, type, status, amount, currency, test, parent_uid, details, created_at, updated_at)
         VALUES ($1, $3, 'payment', 'successful', 100, 'EUR', true, NULL, '{}', now(), now()),
                ($2, $3, 'proof', 'successful', 100, 'EUR', true, $1, '{"proof": {"status": "successful"}}', now(), now())`,
        [pay, proof, shopId],
      );
      await fresh.query(
        `INSERT INTO transaction_history (uid, status, at) VALUES ($1, 'pending', now()), ($1, 'successful', now())`,
        [pay],
      );
      await fresh.query(
        `INSERT INTO proofs (uid, parent_uid, shop_id, checksum, file_name, created_at)
         VALUES ($1, $2, $3, $4, 'receipt.pdf', now())`,
        [proof, pay, shopId, checksum],
      );
      await fresh.query(
        `INSERT INTO subscriptions (id, shop_id, plan_id, state, language, billing_anchor, billing_day, created_at, updated_at)
         VALUES ($1, $2, 'pln_x', 'active', 'en', now(), 1, now(), now())`,
        [`sbs_${n}`, shopId],
      );
      await fresh.query(
        `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, created_at, updated_at)
         VALUES ($1, 1, 1, 100, 'EUR', 'successful', now(), now())`,
        [`sbs_${n}`],
      );
      const [event] = await fresh.query<{ id: number }>(
        `INSERT INTO events (shop_id, resource_type, resource_id, event, payload, url, created_at)
         VALUES ($1, 'subscription', $2, 'created.subscription', '{}', 'https://shop.example/hook', now())
         RETURNING id`,
        [shopId, `sbs_${n}`],
      );
      await fresh.query(
        `INSERT INTO deliveries (event_id, shop_id, resource_id, status, attempts, next_attempt_at)
         VALUES ($1, $2, $3, 'pending', 1, now())`,
        [event?.id, shopId, `sbs_${n}`],
      );
      await fresh.query(
        `INSERT INTO event_attempts (event_id, n, at, duration_ms) VALUES ($1, 1, now(), 5)`,
        [event?.id],
      );
    }
    await migrate(fresh, all);

    const shops = (sql: string) => fresh.query<{ shop_id: number; n: number }>(sql);
    expect(
      await shops(
        'SELECT shop_id, count(*)::int AS n FROM transaction_history GROUP BY shop_id ORDER BY shop_id',
      ),
    ).toEqual([
      { shop_id: a, n: 2 },
      { shop_id: b, n: 2 },
    ]);
    expect(
      await shops('SELECT c.shop_id, 1 AS n FROM subscription_charges c ORDER BY subscription_id'),
    ).toEqual([
      { shop_id: a, n: 1 },
      { shop_id: b, n: 1 },
    ]);
    expect(await shops('SELECT shop_id, 1 AS n FROM event_attempts ORDER BY event_id')).toEqual([
      { shop_id: a, n: 1 },
      { shop_id: b, n: 1 },
    ]);
    // One document sent by two shops: a copy for each, each proof naming its own shop's.
    expect(
      await fresh.query(
        `SELECT d.shop_id, p.shop_id AS proof_shop, d.size FROM proof_documents d
         JOIN proofs p ON p.checksum = d.checksum AND p.shop_id = d.shop_id ORDER BY d.shop_id`,
      ),
    ).toEqual([
      { shop_id: a, proof_shop: a, size: 4 },
      { shop_id: b, proof_shop: b, size: 4 },
    ]);
    // A row may only refer to a row of its own shop.
    await expect(
      fresh.query(
        `INSERT INTO transaction_history (uid, status, at, shop_id) VALUES ($1, 'failed', now(), $2)`,
        ['00000000-0000-4000-8000-000000000001', b],
      ),
    ).rejects.toThrow(/foreign key/);
  });
});
