import type { Queryable, Statement } from '../db/db.js';

/** A query parameter of a cabinet page as one trimmed string ('' when absent, repeated or too long). */
export function queryText(query: unknown, name: string, max = 200): string {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  if (typeof value !== 'string') return '';
  const text = value.trim();
  return text.length <= max ? text : '';
}

/**
 * SQL that keeps customers whose e-mail address starts with the text in parameter `param`, in any
 * letter case: the stretch of the customers_shop_email index (lower-cased, compared character by
 * character) from the prefix up to the prefix followed by the last code point.
 */
export function emailStartsWith(param: string): string {
  return `lower(email) ~>=~ lower(${param}) AND lower(email) ~<~ (lower(${param}) || chr(1114111))`;
}

/**
 * What a list's statements run on: the store (or, in tests, something that records their plans).
 * A batch, so the planner settings below and the statement share one transaction and one round trip.
 */
export interface ListStore extends Queryable {
  batch<R = Record<string, unknown>>(statements: readonly Statement[]): Promise<R[][]>;
}

/**
 * Planner settings for one list statement, for its transaction only: index scans and nested loops,
 * no sort, no hash, no bitmap, no sequential scan where an index can do. A page of a list is then
 * read by walking the index that gives its order (shop, seq) and stopping when the page is full,
 * whatever the statistics say. Without them a store whose statistics are stale (the embedded store
 * has no autovacuum; a PostgreSQL may run without it) chose to read all of a shop's rows and sort
 * them, or to join its 20,000 customers against every subscription: seconds for 50 rows, with the
 * embedded store, which runs one statement at a time, held all along.
 */
const INDEX_WALK = `SELECT ${[
  'enable_seqscan',
  'enable_bitmapscan',
  'enable_sort',
  'enable_incremental_sort',
  'enable_hashjoin',
  'enable_mergejoin',
  'enable_hashagg',
  'enable_material',
]
  .map((name) => `set_config('${name}', 'off', true)`)
  .join(', ')}`;

/** Runs one statement of a list under the index-walk settings (a transaction of its own). */
export async function walkIndex<R>(db: ListStore, sql: string, params: readonly unknown[]): Promise<R[]> {
  const results = await db.batch<R>([{ sql: INDEX_WALK }, { sql, params }]);
  return results[1] ?? [];
}

/**
 * How many matching rows a filter may look up by its own index before the list is read from them
 * (sorted, at most this many): more than this, and the list walks its (shop, seq) index instead,
 * checking the filter on each row, which is cheap when so many match.
 */
export const FEW = 200;

/**
 * The store as a list of another part of Kopek reads it (the notifications' list, say): each of its
 * statements runs under the index-walk settings. For reads only.
 */
export function indexWalking<D extends ListStore>(db: D): D {
  const query = <R>(sql: string | Statement, params?: readonly unknown[]) => {
    const s = typeof sql === 'string' ? { sql, params } : sql;
    return walkIndex<R>(db, s.sql, s.params ?? []);
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'query') return query;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
