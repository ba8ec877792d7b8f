import type { FastifyBaseLogger } from 'fastify';
import { every } from '../periodic.js';
import type { Db } from './db.js';

/**
 * Keeps the planner's statistics current where nothing else does. The embedded store has no
 * autovacuum, and a PostgreSQL run with `autovacuum = off` has none either: a table filled since its
 * last ANALYZE still looks as it was (a shop's 20,000 customers as none), and the planner picks plans
 * for a table that no longer exists. Every minute this analyses the tables changed enough since their
 * last ANALYZE, by autovacuum's own rule (50 rows and a tenth of the table): a look at
 * pg_stat_user_tables when nothing changed, a sampled ANALYZE of one table (tens of milliseconds) when
 * something did. The cabinet's queries are written so that their plans do not depend on this
 * (src/cabinet/query.ts); it keeps the rest of the statements' estimates right.
 */

export const ANALYZE_EVERY_MS = 60_000;

/** Analyses the tables changed past autovacuum's threshold since their last ANALYZE; returns their names. */
export async function analyzeChangedTables(db: Db): Promise<string[]> {
  if (db.kind === 'pglite') {
    // This process is the store's only session: its pending counts reach the view once flushed.
    await db.query('SELECT pg_stat_force_next_flush()');
    await db.query('SELECT pg_stat_clear_snapshot()');
  }
  const rows = await db.query<{ schemaname: string; relname: string }>(
    `SELECT schemaname, relname FROM pg_stat_user_tables
     WHERE schemaname = current_schema() AND n_mod_since_analyze >= 50 + 0.1 * greatest(n_live_tup, 0)
     ORDER BY n_mod_since_analyze DESC`,
  );
  const done: string[] = [];
  for (const { schemaname, relname } of rows) {
    await db.query(`ANALYZE ${quoteIdent(schemaname)}.${quoteIdent(relname)}`);
    done.push(relname);
  }
  return done;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Whether this store needs Kopek to analyse it: the embedded store always, PostgreSQL without autovacuum. */
export async function needsAnalyzing(db: Db): Promise<boolean> {
  if (db.kind === 'pglite') return true;
  const [row] = await db.query<{ autovacuum: string }>('SHOW autovacuum');
  return row?.autovacuum === 'off';
}

/** Starts the minute's ANALYZE of changed tables where the store needs it; returns the stop function. */
export async function startStatistics(
  deps: { db: Db; log: FastifyBaseLogger },
  everyMs = ANALYZE_EVERY_MS,
): Promise<() => void> {
  if (!(await needsAnalyzing(deps.db))) return () => {};
  return every(everyMs, deps.log, 'analysed changed tables', async () => {
    const tables = await analyzeChangedTables(deps.db);
    if (tables.length > 0) deps.log.debug({ tables }, 'analysed tables');
    return tables.length;
  });
}
