import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { seedWebhooks } from '../../bench/webhooks-seed.js';
import { freshPostgresUrl } from '../fresh-store.js';

/**
 * The webhook benchmark's backlog case plans with statistics never collected: its seed leaves them
 * uncollected and keeps autovacuum away from the tables for the run; the spread case collects them.
 * PostgreSQL only, as the benchmark.
 */

async function statisticsOf(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ relname: string; reltuples: number; reloptions: string[] | null }>(
      `SELECT relname, reltuples::float8 AS reltuples, reloptions FROM pg_class
       WHERE relname IN ('events', 'deliveries', 'event_attempts', 'shops') AND relkind = 'r' ORDER BY relname`,
    );
    return rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(!process.env.DATABASE_URL)('the webhook benchmark seed (PostgreSQL only)', () => {
  it("the backlog case's store has its statistics never collected, and no autovacuum for the run", async () => {
    const url = await freshPostgresUrl();
    const seeded = await seedWebhooks(url, {
      count: 200,
      shops: 1,
      perResource: 2,
      url: 'http://127.0.0.1:9/hook',
      statistics: 'never',
    });
    expect(seeded.count).toBe(200);
    const tables = await statisticsOf(url);
    expect(tables.map((t) => t.relname)).toEqual(['deliveries', 'event_attempts', 'events', 'shops']);
    for (const t of tables) {
      // -1: never vacuumed nor analysed.
      expect(t.reltuples, t.relname).toBe(-1);
      expect(t.reloptions ?? [], t.relname).toContain('autovacuum_enabled=false');
    }
  });

  it("the spread case's store has them collected", async () => {
    const url = await freshPostgresUrl();
    await seedWebhooks(url, { count: 200, shops: 1, perResource: 2, url: 'http://127.0.0.1:9/hook' });
    const deliveries = (await statisticsOf(url)).find((t) => t.relname === 'deliveries');
    expect(deliveries?.reltuples).toBe(200);
  });
});
