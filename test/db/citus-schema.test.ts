import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import { DISTRIBUTED_TABLES, DISTRIBUTION_COLUMN, REFERENCE_TABLES } from '../../src/db/distribution.js';
import { type FreshStore, freshStore } from '../fresh-store.js';

/**
 * The migrated schema keeps to what Citus needs to spread Kopek by shop (docs/scaling.md): every
 * table is classified as distributed by shop_id or as a reference table (src/db/distribution.ts);
 * a distributed table has shop_id, in its primary key and in every unique key and unique index; a
 * foreign key between two distributed tables joins them on shop_id; no reference table points at a
 * distributed one. Read from the catalogue of a store of the run's kind (PGlite or PostgreSQL) that
 * has the migrations and nothing else (the shared store also holds other tests' scratch tables).
 */

let store: FreshStore;
let db: Db;

beforeAll(async () => {
  store = await freshStore();
  db = store.db;
});

afterAll(async () => {
  await store.close();
});

interface UniqueIndex {
  table: string;
  index: string;
  primary: boolean;
  columns: (string | null)[];
}

interface ForeignKey {
  table: string;
  name: string;
  target: string;
  columns: string[];
  targetColumns: string[];
}

async function tables(): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  return rows.map((r) => r.name);
}

/** Every unique index of the schema (primary keys and unique constraints included), with its key columns. */
async function uniqueIndexes(): Promise<UniqueIndex[]> {
  const rows = await db.query<{ table: string; index: string; primary: boolean; columns: (string | null)[] }>(
    `SELECT t.relname AS table, i.relname AS index, x.indisprimary AS primary,
       array(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k (attnum, pos)
               LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
              WHERE k.pos <= x.indnkeyatts ORDER BY k.pos) AS columns
       FROM pg_index x
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema() AND x.indisunique
      ORDER BY 1, 2`,
  );
  return rows;
}

async function foreignKeys(): Promise<ForeignKey[]> {
  return db.query<ForeignKey>(
    `SELECT t.relname AS table, c.conname AS name, r.relname AS target,
       array(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k (attnum, pos)
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.pos) AS columns,
       array(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k (attnum, pos)
               JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.pos)
         AS "targetColumns"
       FROM pg_constraint c
       JOIN pg_class t ON t.oid = c.conrelid
       JOIN pg_class r ON r.oid = c.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = current_schema() AND c.contype = 'f'
      ORDER BY 1, 2`,
  );
}

/** The tables docs/scaling.md's classification table names, by kind. */
function documented(): { distributed: string[]; reference: string[] } {
  const page = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8');
  const distributed: string[] = [];
  const reference: string[] = [];
  for (const m of page.matchAll(/^\| `([a-z_]+)` \| (distributed|reference) \|/gm)) {
    if (m[2] === 'distributed') distributed.push(m[1] as string);
    else reference.push(m[1] as string);
  }
  return { distributed: distributed.sort(), reference: reference.sort() };
}

describe('the schema is ready to be distributed by shop', () => {
  it('classifies every table exactly once, as distributed or as reference', async () => {
    const all = await tables();
    const both = DISTRIBUTED_TABLES.filter((t) => REFERENCE_TABLES.includes(t));
    expect(both, 'tables listed both as distributed and as reference').toEqual([]);
    const unclassified = all.filter((t) => !DISTRIBUTED_TABLES.includes(t) && !REFERENCE_TABLES.includes(t));
    expect(unclassified, 'tables to classify in src/db/distribution.ts and docs/scaling.md').toEqual([]);
    const gone = [...DISTRIBUTED_TABLES, ...REFERENCE_TABLES].filter((t) => !all.includes(t));
    expect(gone, 'classified tables the schema does not have').toEqual([]);
  });

  it('gives every distributed table a shop_id that is never null', async () => {
    const rows = await db.query<{ table: string; nullable: string }>(
      `SELECT table_name AS table, is_nullable AS nullable FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = $1`,
      [DISTRIBUTION_COLUMN],
    );
    const notNull = new Set(rows.filter((r) => r.nullable === 'NO').map((r) => r.table));
    expect(DISTRIBUTED_TABLES.filter((t) => !notNull.has(t))).toEqual([]);
  });

  it('puts shop_id in the primary key and in every unique key and unique index of a distributed table', async () => {
    const indexes = await uniqueIndexes();
    const withPrimaryKey = new Set(indexes.filter((i) => i.primary).map((i) => i.table));
    expect(
      DISTRIBUTED_TABLES.filter((t) => !withPrimaryKey.has(t)),
      'distributed tables without a primary key',
    ).toEqual([]);
    const offending = indexes
      .filter((i) => DISTRIBUTED_TABLES.includes(i.table) && !i.columns.includes(DISTRIBUTION_COLUMN))
      .map((i) => `${i.table}.${i.index} (${i.columns.map((c) => c ?? '<expression>').join(', ')})`);
    expect(offending, 'unique keys of distributed tables without shop_id').toEqual([]);
  });

  it('joins distributed tables by foreign keys on shop_id, and no reference table refers to a distributed one', async () => {
    const offending: string[] = [];
    for (const fk of await foreignKeys()) {
      const from = DISTRIBUTED_TABLES.includes(fk.table);
      const to = DISTRIBUTED_TABLES.includes(fk.target);
      const at = fk.columns.indexOf(DISTRIBUTION_COLUMN);
      if (!from && to) offending.push(`${fk.table}.${fk.name}: a reference table refers to ${fk.target}`);
      if (from && to && (at < 0 || fk.targetColumns[at] !== DISTRIBUTION_COLUMN))
        offending.push(`${fk.table}.${fk.name} (${fk.columns.join(', ')}) → ${fk.target} without shop_id`);
    }
    expect(offending).toEqual([]);
  });

  it('is the classification docs/scaling.md shows', () => {
    const page = documented();
    expect(page.distributed).toEqual([...DISTRIBUTED_TABLES].sort());
    expect(page.reference).toEqual([...REFERENCE_TABLES].sort());
  });
});
