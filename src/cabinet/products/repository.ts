import type { ProductRow } from '../../products/index.js';
import { type ListStore, walkIndex } from '../query.js';

/** One page of a shop's products, newest first, `size + 1` rows, by the (shop_id, seq) index. */
export function listProductPage(
  db: ListStore,
  shopId: number,
  after: number | undefined,
  size: number,
): Promise<Array<ProductRow & { seq: string }>> {
  const values: unknown[] = [shopId, size + 1];
  if (after !== undefined) values.push(after);
  return walkIndex(
    db,
    `SELECT * FROM products WHERE shop_id = $1${after !== undefined ? ' AND seq < $3' : ''}
      ORDER BY seq DESC LIMIT $2`,
    values,
  );
}
