import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/compose/runtime.js';
import { openDb } from '../../src/compose/store.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { pgErrorCode } from '../../src/db/db.js';
import { holdTransaction } from '../../src/db/held.js';
import { PGLITE_SHARED_BUFFERS } from '../../src/db/pglite.js';
import { createPostgresDb, retryTransient, TRANSIENT_ATTEMPTS } from '../../src/db/postgres.js';
import { freshPostgresUrl, sharedStoreUrl } from '../fresh-store.js';
import { openTestDb } from '../harness.js';

// Batches and prepared statements on the store the suite runs against (PGlite or PostgreSQL).
let db: Db;
const table = `batch_probe_${process.pid}`;

beforeAll(async () => {
  db = await openTestDb();
  await db.query(
    `CREATE TABLE ${table} (id text PRIMARY KEY, amount bigint NOT NULL, at timestamptz NOT NULL, doc jsonb)`,
  );
});

afterAll(async () => {
  await db.query(`DROP TABLE ${table}`);
  await db.close();
});

const insert = (id: string, amount: number, doc: unknown = null) => ({
  sql: `INSERT INTO ${table} (id, amount, at, doc) VALUES ($1, $2, $3, $4) RETURNING *`,
  params: [id, amount, new Date('2026-01-02T03:04:05.678Z'), doc === null ? null : JSON.stringify(doc)],
});
const count = async (prefix: string) => {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE id LIKE $1`, [
    `${prefix}%`,
  ]);
  return row?.n;
};

describe('Db.batch', () => {
  it('runs the statements in order and answers each one’s rows, typed as single queries are', async () => {
    const results = await db.batch([
      insert('a1', 9_007_199_254_740_991, { k: [1, 'two'] }),
      { sql: `UPDATE ${table} SET amount = amount - 1 WHERE id = $1`, params: ['a1'] },
      { sql: `SELECT id, amount, at, doc FROM ${table} WHERE id = $1`, params: ['a1'] },
      { sql: `SELECT count(*)::int AS n FROM ${table} WHERE id = 'none'` },
    ]);
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual([
      {
        id: 'a1',
        amount: 9_007_199_254_740_991,
        at: new Date('2026-01-02T03:04:05.678Z'),
        doc: { k: [1, 'two'] },
      },
    ]);
    expect(results[1]).toEqual([]);
    expect(results[2]).toEqual([
      {
        id: 'a1',
        amount: 9_007_199_254_740_990,
        at: new Date('2026-01-02T03:04:05.678Z'),
        doc: { k: [1, 'two'] },
      },
    ]);
    expect(results[3]).toEqual([{ n: 0 }]);
  });

  it('answers an empty batch at once, alone or inside a transaction', async () => {
    expect(await db.batch([])).toEqual([]);
    expect(await db.tx((tx) => tx.batch([]))).toEqual([]);
  });

  it('keeps nothing when a statement fails, and says why', async () => {
    await db.batch([insert('b1', 1)]);
    const err = await db.batch([insert('b2', 2), insert('b1', 3), insert('b3', 4)]).catch((e: unknown) => e);
    expect(pgErrorCode(err)).toBe('23505');
    expect(await count('b')).toBe(1);
    const [row] = await db.query<{ amount: number }>(`SELECT amount FROM ${table} WHERE id = 'b1'`);
    expect(row?.amount).toBe(1);
  });

  it('runs the same statements again after a failed batch, on every pooled connection', async () => {
    // The failure stops the batch before its third statement was ever prepared; the next batches
    // (on whichever connection) must prepare or reuse each statement correctly.
    const update = (id: string) => ({
      sql: `UPDATE ${table} SET amount = amount + 1 WHERE id = $1 RETURNING amount`,
      params: [id],
    });
    await db.batch([insert('c1', 1)]);
    await expect(db.batch([insert('c1', 1), update('c1')])).rejects.toThrow();
    const rounds = await Promise.all(
      Array.from({ length: 12 }, (_, i) => db.batch([insert(`c${i + 2}`, i), update('c1')])),
    );
    expect(rounds.map((r) => r[0]?.[0])).toEqual(
      Array.from({ length: 12 }, (_, i) => expect.objectContaining({ id: `c${i + 2}`, amount: i })),
    );
    const amounts = rounds.map((r) => (r[1]?.[0] as { amount: number } | undefined)?.amount).sort();
    expect(amounts).toEqual(Array.from({ length: 12 }, (_, i) => i + 2).sort());
    expect(await count('c')).toBe(13);
  });

  it('keeps nothing when a value cannot be converted for sending, after statements already sent', async () => {
    // A value that refers to itself has no JSON: the statement fails before it is sent, so
    // PostgreSQL never hears of it.
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const unsendable = { sql: `SELECT $1::jsonb AS doc`, params: [circular] };
    const err = await db.batch([insert('e1', 1), unsendable, insert('e2', 2)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(await count('e')).toBe(0);
    expect(await db.batch([insert('e3', 3)])).toHaveLength(1);
    expect(await count('e')).toBe(1);
  });

  it('leaves the store usable after a batch whose values cannot be bound', async () => {
    const bad = { sql: `SELECT $1::uuid AS u`, params: ['not-a-uuid'] };
    const err = await db.batch([insert('d1', 1), bad]).catch((e: unknown) => e);
    expect(pgErrorCode(err)).toBe('22P02');
    expect(await count('d')).toBe(0);
    const [ok] = await db.batch([
      { sql: `SELECT $1::uuid AS u`, params: ['00000000-0000-4000-8000-000000000000'] },
    ]);
    expect(ok).toEqual([{ u: '00000000-0000-4000-8000-000000000000' }]);
  });
});

describe('prepared statements', () => {
  it('answer the same as before across many runs of one text with different values', async () => {
    const sql = `SELECT $1::bigint + $2::bigint AS sum, $3::text AS label`;
    const runs = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        db.query<{ sum: number; label: string }>(sql, [i, 1000, `run ${i}`]),
      ),
    );
    expect(runs.map((r) => r[0])).toEqual(
      Array.from({ length: 40 }, (_, i) => ({ sum: i + 1000, label: `run ${i}` })),
    );
  });

  it('still answer after the table under them changed shape (another instance migrated)', async () => {
    const shape = `shape_probe_${process.pid}`;
    await db.query(`CREATE TABLE ${shape} (id integer PRIMARY KEY)`);
    try {
      const sql = `SELECT * FROM ${shape} WHERE id = $1`;
      await db.query(`INSERT INTO ${shape} VALUES (1)`);
      for (let i = 0; i < 12; i++) expect(await db.query(sql, [1])).toEqual([{ id: 1 }]);
      await db.query(`ALTER TABLE ${shape} ADD COLUMN note text DEFAULT 'x'`);
      for (let i = 0; i < 12; i++) expect(await db.query(sql, [1])).toEqual([{ id: 1, note: 'x' }]);
    } finally {
      await db.query(`DROP TABLE ${shape}`);
    }
  });
});

describe.runIf(process.env.DATABASE_URL)('prepared statements on PostgreSQL', () => {
  const url = () => sharedStoreUrl() as string;
  const preparedOn = async (prepare: boolean) => {
    // One connection, so the query and the look at its prepared statements share a session.
    const one = createPostgresDb(url(), 1, { prepare });
    try {
      expect(await one.query<{ n: number }>('SELECT $1::int + 1 AS n', [41])).toEqual([{ n: 42 }]);
      await one.batch([{ sql: 'SELECT $1::text AS t', params: ['x'] }]);
      return (await one.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).map(
        (r) => r.name,
      );
    } finally {
      await one.close();
    }
  };

  it('are kept on the connection by default', async () => {
    expect(await preparedOn(true)).toEqual(['kopek_0', 'kopek_1']);
  });

  it('fail a batch or transaction whose connection is lost, and leave the store working', async () => {
    const one = createPostgresDb(url(), 1);
    try {
      // The batch's own backend is ended half-way: the rest of it never runs, nothing is kept.
      const err = await one
        .batch([
          { sql: `INSERT INTO ${table} (id, amount, at) VALUES ($1, 1, now())`, params: ['lost-1'] },
          { sql: 'SELECT pg_terminate_backend(pg_backend_pid())' },
          { sql: `INSERT INTO ${table} (id, amount, at) VALUES ($1, 2, now())`, params: ['lost-2'] },
        ])
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(await one.query(`SELECT id FROM ${table} WHERE id LIKE 'lost-%'`)).toEqual([]);
      expect(await one.batch([{ sql: 'SELECT $1::int AS n', params: [7] }])).toEqual([[{ n: 7 }]]);

      // The same for a transaction.
      await expect(
        one.tx(async (tx) => {
          await tx.query(`INSERT INTO ${table} (id, amount, at) VALUES ($1, 1, now())`, ['lost-3']);
          await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
        }),
      ).rejects.toThrow();
      expect(await one.query(`SELECT id FROM ${table} WHERE id LIKE 'lost-%'`)).toEqual([]);
      expect(await one.tx((tx) => tx.query('SELECT $1::int AS n', [8]))).toEqual([{ n: 8 }]);
    } finally {
      await one.close();
    }
  });

  it('run a batch again that PostgreSQL broke a deadlock with, so both crossing batches take effect', async () => {
    await db.batch([insert('dl-1', 0), insert('dl-2', 0)]);
    // Each batch updates both rows, in the other's order, with a pause between.
    const crossing = (first: string, second: string) => [
      { sql: `UPDATE ${table} SET amount = amount + 1 WHERE id = $1`, params: [first] },
      { sql: 'SELECT pg_sleep(0.3)' },
      { sql: `UPDATE ${table} SET amount = amount + 1 WHERE id = $1`, params: [second] },
    ];
    // The same statements in two plain transactions: PostgreSQL ends one of them as a deadlock.
    const raw = [new pg.Client({ connectionString: url() }), new pg.Client({ connectionString: url() })];
    const codes = await Promise.all(
      raw.map(async (c, i) => {
        await c.connect();
        try {
          await c.query('BEGIN');
          for (const s of crossing(i === 0 ? 'dl-1' : 'dl-2', i === 0 ? 'dl-2' : 'dl-1'))
            await c.query(s.sql, s.params);
          await c.query('ROLLBACK');
          return 'done';
        } catch (err) {
          return pgErrorCode(err);
        } finally {
          await c.end();
        }
      }),
    );
    expect(codes.sort()).toEqual(['40P01', 'done']);
    // As batches, the victim runs again once the other has committed: both take effect.
    const two = createPostgresDb(url(), 2);
    try {
      await Promise.all([two.batch(crossing('dl-1', 'dl-2')), two.batch(crossing('dl-2', 'dl-1'))]);
    } finally {
      await two.close();
    }
    expect(await db.query(`SELECT id, amount FROM ${table} WHERE id LIKE 'dl-%' ORDER BY id`)).toEqual([
      { id: 'dl-1', amount: 2 },
      { id: 'dl-2', amount: 2 },
    ]);
  });

  it('are not made with DATABASE_PREPARE=false (for poolers that cannot keep them)', async () => {
    expect(await preparedOn(false)).toEqual([]);
  });
});

describe('Db.lockKey', () => {
  // A space of its own, and keys of this process: the store is shared with other test files.
  const SPACE = 727_099;
  const k = (name: string) => `${process.pid}:${name}`;

  it('holds a key until released, while other keys and spaces stay free', async () => {
    const release = await db.lockKey(SPACE, k('a'));
    expect(release).toBeTypeOf('function');
    expect(await db.lockKey(SPACE, k('a'))).toBeUndefined();
    const other = await db.lockKey(SPACE, k('b'));
    const otherSpace = await db.lockKey(SPACE + 1, k('a'));
    expect(other).toBeTypeOf('function');
    expect(otherSpace).toBeTypeOf('function');
    await release?.();
    // A second release changes nothing, and the key is free again.
    await release?.();
    const again = await db.lockKey(SPACE, k('a'));
    expect(again).toBeTypeOf('function');
    for (const r of [again, other, otherSpace]) await r?.();
  });

  it('gives a key to exactly one of many takers at once', async () => {
    const takers = await Promise.all(Array.from({ length: 8 }, () => db.lockKey(SPACE, k('race'))));
    expect(takers.filter((t) => t !== undefined)).toHaveLength(1);
    for (const t of takers) await t?.();
  });

  it('holds no transaction open while a key is held', async () => {
    const release = await db.lockKey(SPACE, k('no-tx'));
    try {
      // On PGlite's single connection a held transaction would block this batch for good.
      expect(await db.batch([{ sql: 'SELECT $1::int AS n', params: [3] }])).toEqual([[{ n: 3 }]]);
    } finally {
      await release?.();
    }
  });

  it('is refused inside a transaction view, which is marked as one', async () => {
    const held = await holdTransaction(db);
    try {
      expect(held.db.insideTransaction).toBe(true);
      expect(db.insideTransaction).toBeUndefined();
      await expect(held.db.lockKey(SPACE, k('inside'))).rejects.toThrow(/not inside a transaction/);
    } finally {
      await held.end(false);
    }
  });
});

describe.runIf(process.env.DATABASE_URL)('Db.lockKey on PostgreSQL', () => {
  const SPACE = 727_099;
  const k = (name: string) => `${process.pid}:${name}`;

  it('keeps other processes out, and frees the key when its holder dies', async () => {
    // Another process's store: its own pool and its own lock session.
    const other = createPostgresDb(sharedStoreUrl() as string, 2);
    try {
      const release = await other.lockKey(SPACE, k('cross'));
      expect(release).toBeTypeOf('function');
      expect(await db.lockKey(SPACE, k('cross'))).toBeUndefined();
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks
         WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted`,
        [SPACE],
      );
      expect(row?.n).toBeGreaterThanOrEqual(1);
    } finally {
      // The holder goes away without releasing (as a killed process would): its connection closes.
      await other.close();
    }
    let mine: (() => Promise<void>) | undefined;
    for (let i = 0; i < 100 && !mine; i++) {
      mine = await db.lockKey(SPACE, k('cross'));
      if (!mine) await new Promise((r) => setTimeout(r, 20));
    }
    expect(mine).toBeTypeOf('function');
    await mine?.();
  });

  it('holds its locks on DATABASE_DIRECT_URL, past a pooler, when one is given', async () => {
    const name = `kopek-locks-${process.pid}`;
    const direct = new URL(sharedStoreUrl() as string);
    direct.searchParams.set('application_name', name);
    const config = loadConfig({
      PUBLIC_URL: 'http://kopek.test',
      DATABASE_URL: sharedStoreUrl(),
      DATABASE_DIRECT_URL: direct.toString(),
      KOPEK_MASTER_KEY: '11'.repeat(32),
    });
    const store = await openDb(config);
    const holders = async () =>
      (
        await db.query<{ app: string }>(
          `SELECT a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = hashtext($2)::oid AND l.granted`,
          [SPACE, k('direct')],
        )
      ).map((r) => r.app);
    try {
      const release = await store.lockKey(SPACE, k('direct'));
      expect(release).toBeTypeOf('function');
      // The one session holding the key is the one opened on the direct address.
      expect(await holders()).toEqual([name]);
      await release?.();
      expect(await holders()).toEqual([]);
      // Statements still go through DATABASE_URL's pool: none of them runs on the lock's session.
      const [row] = await store.query<{ app: string }>('SELECT current_setting($1) AS app', [
        'application_name',
      ]);
      expect(row?.app).not.toBe(name);
    } finally {
      await store.close();
    }
  });

  it('warns at start when statements are unprepared and no direct address is given', async () => {
    const url = await freshPostgresUrl();
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const warned = async (env: Record<string, string>) => {
      lines.length = 0;
      const config = loadConfig({
        PUBLIC_URL: 'http://kopek.test',
        DATABASE_URL: url,
        KOPEK_MASTER_KEY: '22'.repeat(32),
        LOG_LEVEL: 'warn',
        ...env,
      });
      const runtime = await startRuntime(config, log as unknown as FastifyBaseLogger);
      await runtime.app.close();
      await runtime.db.close();
      return lines.some((l) => l.includes('set DATABASE_DIRECT_URL to PostgreSQL itself'));
    };
    expect(await warned({ DATABASE_PREPARE: 'false' })).toBe(true);
    expect(await warned({ DATABASE_PREPARE: 'false', DATABASE_DIRECT_URL: url })).toBe(false);
    expect(await warned({})).toBe(false);
  });

  it('takes the lock again after its session was lost', async () => {
    const one = createPostgresDb(sharedStoreUrl() as string, 1);
    try {
      const first = await one.lockKey(SPACE, k('lost'));
      expect(first).toBeTypeOf('function');
      // End every session holding locks of this space for this key: the lock session dies.
      await db.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND classid = $1 AND objid = hashtext($2)::oid AND granted`,
        [SPACE, k('lost')],
      );
      await first?.();
      let again: (() => Promise<void>) | undefined;
      for (let i = 0; i < 100 && !again; i++) {
        again = await one.lockKey(SPACE, k('lost')).catch(() => undefined);
        if (!again) await new Promise((r) => setTimeout(r, 20));
      }
      expect(again).toBeTypeOf('function');
      await again?.();
    } finally {
      await one.close();
    }
  });
});

describe('retryTransient', () => {
  const failing = (codes: Array<string | undefined>) => {
    let calls = 0;
    const work = async () => {
      const code = codes[calls++];
      if (code === undefined) return calls;
      throw Object.assign(new Error(`failed with ${code}`), { code });
    };
    return { work, calls: () => calls };
  };

  it('runs work again after a deadlock or a serialization failure', async () => {
    const w = failing(['40P01', '40001']);
    await expect(retryTransient(w.work)).resolves.toBe(3);
  });

  it(`gives up after ${TRANSIENT_ATTEMPTS} runs, and never retries any other error`, async () => {
    const always = failing(Array(10).fill('40P01'));
    await expect(retryTransient(always.work)).rejects.toMatchObject({ code: '40P01' });
    expect(always.calls()).toBe(TRANSIENT_ATTEMPTS);
    const unique = failing(['23505']);
    await expect(retryTransient(unique.work)).rejects.toMatchObject({ code: '23505' });
    expect(unique.calls()).toBe(1);
  });
});

describe('the embedded store', () => {
  it.runIf(sharedStoreUrl() === undefined)(
    'runs PostgreSQL with a 32 MB buffer cache, not the 128 MB default its memory would hold',
    async () => {
      const [row] = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
      expect(row?.shared_buffers).toBe(PGLITE_SHARED_BUFFERS);
      expect(PGLITE_SHARED_BUFFERS).toBe('32MB');
    },
  );
});

describe('bytea', () => {
  const every = Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) % 256));

  it.each([
    ['every byte value', every],
    ['no bytes', Buffer.alloc(0)],
    ['a view into a larger buffer', every.subarray(100, 300)],
    ['a plain Uint8Array', new Uint8Array([0, 1, 127, 128, 254, 255])],
  ])('goes in and comes back as a Buffer of the same bytes: %s', async (_case, bytes) => {
    const [row] = await db.query<{ back: Buffer; hex: string; length: number }>(
      `SELECT $1::bytea AS back, encode($1::bytea, 'hex') AS hex, octet_length($1::bytea) AS length`,
      [bytes],
    );
    expect(Buffer.isBuffer(row?.back)).toBe(true);
    expect(row?.back.equals(Buffer.from(bytes))).toBe(true);
    // What the store holds, read by the store itself: the same bytes, not their text.
    expect(row?.hex).toBe(Buffer.from(bytes).toString('hex'));
    expect(row?.length).toBe(bytes.length);
  });

  it.runIf(sharedStoreUrl() === undefined)('refuses a value that is not bytes, as PGlite does', async () => {
    await expect(db.query('SELECT $1::bytea AS back', ['not bytes'])).rejects.toThrow(
      'Invalid input for bytea type',
    );
  });
});
