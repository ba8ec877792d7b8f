import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeChangedTables, needsAnalyzing } from '../../src/db/statistics.js';
import { type FreshStore, freshStore } from '../fresh-store.js';

/**
 * Kopek keeps the planner's statistics current where nothing else does: the embedded store (no
 * autovacuum) and a PostgreSQL with autovacuum off. A table filled in bulk since its last ANALYZE is
 * analysed on the next run; a table that has not changed is left alone.
 */

let store: FreshStore;

beforeAll(async () => {
  store = await freshStore();
  await store.db.query('CREATE TABLE stats_probe (id integer PRIMARY KEY, email text NOT NULL)');
});
afterAll(() => store?.close());

const reltuples = async () =>
  Number(
    (
      await store.db.query<{ n: number }>("SELECT reltuples AS n FROM pg_class WHERE relname = 'stats_probe'")
    )[0]?.n,
  );

describe('statistics', () => {
  it('are kept by Kopek on the embedded store, and on PostgreSQL when autovacuum is off', async () => {
    if (store.db.kind === 'pglite') expect(await needsAnalyzing(store.db)).toBe(true);
    else {
      const [row] = await store.db.query<{ autovacuum: string }>('SHOW autovacuum');
      expect(await needsAnalyzing(store.db)).toBe(row?.autovacuum === 'off');
    }
  });

  it('analyses a table filled since its last ANALYZE, and leaves it alone once analysed', async () => {
    await store.db.tx(async (tx) => {
      await tx.query("INSERT INTO stats_probe SELECT g, 'jane@example.com' FROM generate_series(1, 5000) g");
      // The counts of this session reach pg_stat_user_tables when it goes idle (PostgreSQL).
      await tx.query('SELECT pg_stat_force_next_flush()');
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await reltuples()).toBeLessThan(1);
    expect(await analyzeChangedTables(store.db)).toContain('stats_probe');
    expect(await reltuples()).toBe(5000);
    const stats = await store.db.query<{ n_distinct: number }>(
      "SELECT n_distinct FROM pg_stats WHERE tablename = 'stats_probe' AND attname = 'email'",
    );
    expect(stats).toHaveLength(1);
    expect(await analyzeChangedTables(store.db)).not.toContain('stats_probe');
  });
});
