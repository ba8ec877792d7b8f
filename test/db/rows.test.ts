import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Statement } from '../../src/db/db.js';
import { GROUP_SLOTS, writeGrouped } from '../../src/db/grouped.js';
import { MAX_ROWS, mergeRows, shaped, valuesShape } from '../../src/db/rows.js';
import { openTestDb } from '../harness.js';

/**
 * Statements of rows merge across units of work (mergeRows), and units written at the same moment
 * commit together (writeGrouped): every unit whole, in its own order, each with its own outcome.
 */

const parents = `rows_parent_${process.pid}`;
const children = `rows_child_${process.pid}`;
const PARENT = valuesShape('test parents', `INSERT INTO ${parents} (id, note)`, 2);
const CHILD = valuesShape('test children', `INSERT INTO ${children} (id, parent)`, 2);
const parent = (id: string, note = 'n') => shaped(PARENT, [id, note]);
const child = (id: string, of: string, wakes?: boolean) => shaped(CHILD, [id, of], wakes);

describe('mergeRows', () => {
  it('writes each shape once, in the order shapes first appear, rows in the units’ order', () => {
    const merged = mergeRows([
      [parent('p1'), child('c1', 'p1')],
      [parent('p2'), child('c2', 'p2')],
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]?.sql).toBe(`INSERT INTO ${parents} (id, note) VALUES ($1, $2), ($3, $4)`);
    expect(merged[0]?.params).toEqual(['p1', 'n', 'p2', 'n']);
    expect(merged[1]?.sql).toBe(`INSERT INTO ${children} (id, parent) VALUES ($1, $2), ($3, $4)`);
    expect(merged[1]?.params).toEqual(['c1', 'p1', 'c2', 'p2']);
  });

  it('keeps a unit apart when its shapes come in another order, or one has no shape', () => {
    const odd = [child('c3', 'p3'), parent('p3')];
    const unshaped: Statement[] = [parent('p4'), { sql: 'SELECT 1' }];
    const merged = mergeRows([[parent('p1'), child('c1', 'p1')], odd, unshaped, [parent('p2')]]);
    expect(merged.map((s) => s.params)).toEqual([
      ['p1', 'n', 'p2', 'n'],
      ['c1', 'p1'],
      ['c3', 'p3'],
      ['p3', 'n'],
      ['p4', 'n'],
      undefined,
    ]);
  });

  it('joins a shape written twice in a unit to its first statement, and carries any wake', () => {
    const merged = mergeRows([[parent('p1'), child('c1', 'p1'), parent('p1b')], [child('c2', 'p1', true)]]);
    expect(merged.map((s) => s.params)).toEqual([
      ['p1', 'n', 'p1b', 'n'],
      ['c1', 'p1', 'c2', 'p1'],
    ]);
    expect(merged.map((s) => s.wakes)).toEqual([false, true]);
  });

  it(`puts at most ${MAX_ROWS} rows in one statement`, () => {
    const units = Array.from({ length: MAX_ROWS + 3 }, (_, i) => [parent(`p${i}`)]);
    const merged = mergeRows(units);
    expect(merged.map((s) => (s.params?.length ?? 0) / 2)).toEqual([MAX_ROWS, 2, 1]);
  });

  it('writes rows in statements of 2^k rows, so a shape has a handful of texts whatever the group sizes', () => {
    const texts = new Set<string>();
    for (let n = 2; n <= MAX_ROWS; n++) {
      const units = Array.from({ length: n }, (_, i) => [parent(`p${i}`)]);
      const merged = mergeRows(units);
      const sizes = merged.map((s) => (s.params?.length ?? 0) / 2);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(n);
      for (const size of sizes) expect(Math.log2(size) % 1).toBe(0);
      // Largest first, rows in the units' order.
      expect([...sizes].sort((a, b) => b - a)).toEqual(sizes);
      expect(merged.flatMap((s) => (s.params ?? []).filter((_, i) => i % 2 === 0))).toEqual(
        units.map((_, i) => `p${i}`),
      );
      for (const s of merged) texts.add(s.sql);
    }
    expect(texts.size).toBe(Math.log2(MAX_ROWS) + 1);
  });

  it('leaves a single unit as it is', () => {
    const unit = [parent('p1'), child('c1', 'p1'), parent('p2')];
    expect(mergeRows([unit])).toEqual(unit);
  });
});

let db: Db;
beforeAll(async () => {
  db = await openTestDb();
  await db.query(`CREATE TABLE ${parents} (id text PRIMARY KEY, note text NOT NULL)`);
  await db.query(
    `CREATE TABLE ${children} (id text PRIMARY KEY, parent text NOT NULL REFERENCES ${parents})`,
  );
});
afterAll(async () => {
  await db.query(`DROP TABLE IF EXISTS ${children}`);
  await db.query(`DROP TABLE IF EXISTS ${parents}`);
  await db.close();
});

const count = async (table: string, prefix: string) => {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE id LIKE $1`, [
    `${prefix}%`,
  ]);
  return row?.n;
};

/** `db`, counting the batches run through it. */
function counted(): { db: Db; batches: () => number } {
  let n = 0;
  return {
    db: {
      ...db,
      batch: (st) => {
        n++;
        return db.batch(st);
      },
    },
    batches: () => n,
  };
}

describe.runIf(!process.env.DATABASE_URL)('writeGrouped on the embedded store', () => {
  it('writes each unit as a batch of its own', async () => {
    const run = randomUUID();
    const store = counted();
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        writeGrouped(store.db, [parent(`${run}-p${i}`), child(`${run}-c${i}`, `${run}-p${i}`)]),
      ),
    );
    expect(store.batches()).toBe(10);
    expect(await count(parents, run)).toBe(10);
    expect(await count(children, run)).toBe(10);
  });
});

describe.runIf(process.env.DATABASE_URL)('writeGrouped on PostgreSQL', () => {
  it('commits many units at once, each whole, in fewer transactions than units', async () => {
    const run = randomUUID();
    const store = counted();
    const units = Array.from({ length: 60 }, (_, i) => [
      parent(`${run}-p${i}`),
      child(`${run}-c${i}`, `${run}-p${i}`),
    ]);
    await Promise.all(units.map((u) => writeGrouped(store.db, u)));
    expect(await count(parents, run)).toBe(60);
    expect(await count(children, run)).toBe(60);
    // The first units find slots free; the rest wait and go in groups.
    expect(store.batches()).toBeGreaterThanOrEqual(GROUP_SLOTS);
    expect(store.batches()).toBeLessThan(60);
  });

  it('a unit PostgreSQL refuses fails alone: the others of its group commit', async () => {
    const run = randomUUID();
    await db.query(`INSERT INTO ${parents} (id, note) VALUES ($1, 'taken')`, [`${run}-taken`]);
    let batches = 0;
    // Held until every unit has been handed over, so they form one group.
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const gated: Db = {
      ...db,
      batch: async (st) => {
        batches++;
        await gate;
        return db.batch(st);
      },
    };
    const fillers = Array.from({ length: GROUP_SLOTS }, (_, i) =>
      writeGrouped(gated, [parent(`${run}-f${i}`)]),
    );
    const good = Array.from({ length: 5 }, (_, i) =>
      writeGrouped(gated, [parent(`${run}-p${i}`), child(`${run}-c${i}`, `${run}-p${i}`)]),
    );
    // Its parent's id is taken: the unit, and so the group's first transaction, fails.
    const bad = writeGrouped(gated, [parent(`${run}-taken`), child(`${run}-cx`, `${run}-taken`)]).then(
      () => undefined,
      (err: unknown) => err,
    );
    open();
    await Promise.all([...fillers, ...good]);
    expect(await bad).toMatchObject({ code: '23505' });
    expect(await count(parents, `${run}-p`)).toBe(5);
    expect(await count(children, `${run}-c`)).toBe(5);
    expect(await count(children, `${run}-cx`)).toBe(0);
    // The slots' units, the group that failed, then each of its six units on its own.
    expect(batches).toBe(GROUP_SLOTS + 1 + 6);
  });

  /** `db` whose batches of more than one unit's rows lose their connection: before or after committing. */
  function losing(when: 'before' | 'after', run: string): { db: Db; lost: () => number } {
    let lost = 0;
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    setTimeout(open, 50);
    return {
      db: {
        ...db,
        batch: async (st) => {
          await gate;
          const grouped = st.some(
            (s) => (s.params?.length ?? 0) > 2 && String(s.params?.[0]).startsWith(run),
          );
          if (!grouped) return db.batch(st);
          lost++;
          if (when === 'after') await db.batch(st);
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined });
        },
      },
      lost: () => lost,
    };
  }

  it.each(['before', 'after'] as const)(
    'a group whose connection is lost %s its commit answers each unit by what committed, never twice',
    async (when) => {
      const run = randomUUID();
      const store = losing(when, run);
      const units = Array.from({ length: 12 }, (_, i) => [
        parent(`${run}-p${i}`),
        child(`${run}-c${i}`, `${run}-p${i}`),
      ]);
      const witness = (i: number) => ({
        sql: `SELECT 1 FROM ${parents} WHERE id = $1`,
        params: [`${run}-p${i}`],
      });
      const outcomes = await Promise.allSettled(units.map((u, i) => writeGrouped(store.db, u, witness(i))));
      expect(store.lost()).toBeGreaterThan(0);
      expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
      expect(await count(parents, `${run}-p`)).toBe(12);
      expect(await count(children, `${run}-c`)).toBe(12);
    },
  );

  it('a unit without a witness fails when its group’s outcome is unknown', async () => {
    const run = randomUUID();
    const store = losing('before', run);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        writeGrouped(store.db, [parent(`${run}-p${i}`), parent(`${run}-q${i}`)]),
      ),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    expect(await count(parents, `${run}-p`)).toBe(8 - failed.length);
  });

  it('inside a transaction, is a batch of that transaction', async () => {
    const run = randomUUID();
    await expect(
      db.tx(async (tx) => {
        const within: Db = { ...db, insideTransaction: true, batch: (st) => tx.batch(st) };
        await writeGrouped(within, [parent(`${run}-p`)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await count(parents, run)).toBe(0);
  });
});
