import type { Queryable } from './db.js';

/**
 * The plan of a statement that claims work from a queue (due notifications, e-mails, renewals,
 * expired pages), fixed whatever the statistics say.
 *
 * A queue is read oldest first from an index in that order, and only as far as the rows it takes: a
 * claim of 50 reads about 50 rows whether 50 or a million wait. PostgreSQL chooses otherwise when its
 * statistics are stale: a burst (a month's renewals at midnight, a receiver down for an hour) before
 * autovacuum's next visit, or a store without autovacuum, has statistics that say the queue is
 * nearly empty, and PostgreSQL then reads every due row, sorts them and keeps the first few, or reads
 * the whole table, on every claim. One shop's backlog of 10,000 notifications took seconds per claim.
 *
 * So, for the claim only: no sequential or bitmap scans (which give no order), no sort of what was
 * read (an index gives the order; a sort of the few rows taken is still made, it is the only way),
 * no hash or merge joins and no materialising (which read their whole input first): index scans in
 * index order and nested loops. And no JIT: with those turned off, the plan's estimated cost is in the
 * billions, far above the JIT's threshold, and compiling it took a second per claim.
 */
export const INDEX_ORDER_PLAN = `SELECT set_config('enable_seqscan', 'off', true),
  set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),
  set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
  set_config('enable_material', 'off', true), set_config('jit', 'off', true)`;

/** What INDEX_ORDER_PLAN changed, as the session had it: the rest of the transaction plans freely. */
export const FREE_PLAN = `SELECT set_config(name, reset_val, true) FROM pg_settings
  WHERE name IN ('enable_seqscan', 'enable_bitmapscan', 'enable_sort', 'enable_hashjoin',
    'enable_mergejoin', 'enable_material', 'jit')`;

/**
 * Runs `claim` (a statement of the open transaction `tx`) on a plan in index order (INDEX_ORDER_PLAN),
 * and lets the rest of the transaction plan freely again. A claim that fails fails the transaction,
 * which drops the settings with it.
 */
export async function inIndexOrder<T>(tx: Queryable, claim: () => Promise<T>): Promise<T> {
  await tx.query(INDEX_ORDER_PLAN);
  const result = await claim();
  await tx.query(FREE_PLAN);
  return result;
}
