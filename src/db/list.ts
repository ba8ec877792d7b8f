import type { ListParams } from '../core/paging.js';
import { unknownCursor } from '../core/paging.js';
import type { Queryable } from './db.js';

/**
 * One page of a shop's rows, newest first, limit + 1 rows (see `page`). `table` and the extra
 * condition are written by the caller's repository, never taken from input; values are parameters.
 */
export async function listPage<R>(
  db: Queryable,
  table: string,
  shopId: number,
  params: ListParams,
  filter: { sql: string; values: unknown[] } = { sql: '', values: [] },
): Promise<R[]> {
  const values: unknown[] = [shopId, params.limit + 1, ...filter.values];
  let cursor = '';
  if (params.startingAfter !== undefined) {
    const found = await db.query<{ seq: number }>(`SELECT seq FROM ${table} WHERE shop_id = $1 AND id = $2`, [
      shopId,
      params.startingAfter,
    ]);
    if (found.length === 0) throw unknownCursor();
    values.push(found[0]?.seq);
    cursor = ` AND seq < $${values.length}`;
  }
  return db.query<R>(
    `SELECT * FROM ${table} WHERE shop_id = $1${filter.sql}${cursor} ORDER BY seq DESC LIMIT $2`,
    values,
  );
}
