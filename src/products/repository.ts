import type { ListParams } from '../core/paging.js';
import type { Queryable, Tx } from '../db/db.js';
import { listPage } from '../db/list.js';
import type { ProductData } from './input.js';

export interface ProductRow extends ProductData {
  id: string;
  shop_id: number;
  created_at: Date;
  updated_at: Date;
}

/** The data columns in one order, shared by INSERT and UPDATE; jsonb values go as JSON text. */
function dataValues(p: ProductData): unknown[] {
  return [
    p.name,
    p.description,
    p.currency,
    p.amount,
    p.quantity,
    p.infinite,
    JSON.stringify(p.visible_fields),
    p.test,
    p.immortal,
    p.expired_at,
    p.expires_at,
    p.return_url,
    p.language,
    p.transaction_type,
    JSON.stringify(p.additional_data),
    JSON.stringify(p.extra),
  ];
}

export async function insertProduct(
  db: Queryable,
  shopId: number,
  id: string,
  p: ProductData,
  now: Date,
): Promise<ProductRow> {
  const [row] = await db.query<ProductRow>(
    `INSERT INTO products (id, shop_id, name, description, currency, amount, quantity, infinite,
       visible_fields, test, immortal, expired_at, expires_at, return_url, language, transaction_type,
       additional_data, extra, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $15, $16,
       $17::jsonb, $18::jsonb, $19, $19)
     RETURNING *`,
    [id, shopId, ...dataValues(p), now],
  );
  return row as ProductRow;
}

export async function findProduct(
  db: Queryable,
  shopId: number,
  id: string,
): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>('SELECT * FROM products WHERE shop_id = $1 AND id = $2', [
    shopId,
    id,
  ]);
  return row;
}

/** Locks the row so two concurrent partial updates cannot overwrite each other's fields. */
export async function findProductForUpdate(
  tx: Tx,
  shopId: number,
  id: string,
): Promise<ProductRow | undefined> {
  const [row] = await tx.query<ProductRow>(
    'SELECT * FROM products WHERE shop_id = $1 AND id = $2 FOR UPDATE',
    [shopId, id],
  );
  return row;
}

export async function updateProductRow(
  tx: Tx,
  shopId: number,
  id: string,
  p: ProductData,
  now: Date,
): Promise<void> {
  await tx.query(
    `UPDATE products SET name = $3, description = $4, currency = $5, amount = $6, quantity = $7,
       infinite = $8, visible_fields = $9::jsonb, test = $10, immortal = $11, expired_at = $12,
       expires_at = $13, return_url = $14, language = $15, transaction_type = $16,
       additional_data = $17::jsonb, extra = $18::jsonb, updated_at = $19
     WHERE shop_id = $1 AND id = $2`,
    [shopId, id, ...dataValues(p), now],
  );
}

export function listProducts(db: Queryable, shopId: number, params: ListParams): Promise<ProductRow[]> {
  return listPage<ProductRow>(db, 'products', shopId, params);
}
