import type { Queryable, Tx } from '../../db/db.js';
import type { ProductRow } from '../../products/index.js';

/** SQL of the product payment page: products read without a shop's credentials, and orders. */

export type OrderState = 'charging' | 'waiting' | 'paid' | 'declined' | 'invalid';

export interface OrderRow {
  id: string;
  shop_id: number;
  product_id: string;
  state: OrderState;
  holds_unit: boolean;
  transaction_uid: string | null;
  transaction_status: string | null;
  redirect_url: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A product by its id alone: the buyer's browser has no shop credentials, the id is the link. */
export async function findProductById(db: Queryable, id: string): Promise<ProductRow | undefined> {
  const [row] = await db.query<ProductRow>('SELECT * FROM products WHERE id = $1', [id]);
  return row;
}

/** An order of the shop by its id (the token the page's form carries, so chosen by a browser). */
export async function findOrder(db: Queryable, shopId: number, id: string): Promise<OrderRow | undefined> {
  const [row] = await db.query<OrderRow>('SELECT * FROM product_orders WHERE id = $1 AND shop_id = $2', [
    id,
    shopId,
  ]);
  return row;
}

/**
 * Makes the order and, for finite stock, takes one unit in the same transaction. The decrement is
 * conditional (`quantity > 0`): concurrent buyers of the last unit queue on the product row, and
 * every one after the first finds none left. Answers:
 * - `made`: the order, holding its unit;
 * - `exists`: an order with this id was made before (a double submit): nothing changes;
 * - `soldOut`: no unit left; nothing was written.
 */
export async function makeOrder(
  db: { tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> },
  order: { id: string; shopId: number; productId: string; finite: boolean },
  now: Date,
): Promise<{ made: OrderRow } | { exists: OrderRow } | 'soldOut'> {
  return db
    .tx(async (tx) => {
      const [made] = await tx.query<OrderRow>(
        `INSERT INTO product_orders (id, shop_id, product_id, state, holds_unit, created_at, updated_at)
       VALUES ($1, $2, $3, 'charging', $4, $5, $5)
       ON CONFLICT (id, shop_id) DO NOTHING RETURNING *`,
        [order.id, order.shopId, order.productId, order.finite, now],
      );
      if (!made) {
        const existing = await findOrder(tx, order.shopId, order.id);
        if (!existing) throw new Error(`order ${order.id} vanished`);
        return { exists: existing };
      }
      if (order.finite) {
        const taken = await tx.query(
          `UPDATE products SET quantity = quantity - 1
         WHERE id = $1 AND NOT infinite AND quantity > 0 RETURNING quantity`,
          [order.productId],
        );
        // Throwing rolls the order back too: a sold-out attempt leaves nothing behind.
        if (taken.length === 0) throw new SoldOutSignal();
      }
      return { made };
    })
    .catch((err: unknown) => {
      if (err instanceof SoldOutSignal) return 'soldOut' as const;
      throw err;
    });
}

class SoldOutSignal extends Error {}

export interface OrderOutcome {
  state: OrderState;
  uid: string | null;
  status: string | null;
  redirectUrl: string | null;
}

/**
 * Moves an open order to its outcome, once: whoever comes second (the result page, a reconciling
 * buyer, the request that charged) finds it no longer open and changes nothing. An order that
 * ends without a sale gives its unit back in the same transaction. Returns the order as it is now.
 */
export async function settleOrderRow(
  db: { tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> },
  shopId: number,
  id: string,
  outcome: OrderOutcome,
  now: Date,
): Promise<OrderRow | undefined> {
  return db.tx(async (tx) => {
    const [changed] = await tx.query<OrderRow>(
      `UPDATE product_orders
       SET state = $2, transaction_uid = COALESCE($3, transaction_uid),
         transaction_status = COALESCE($4, transaction_status),
         redirect_url = COALESCE($5, redirect_url), updated_at = $6
       WHERE id = $1 AND shop_id = $7 AND state IN ('charging', 'waiting') RETURNING *`,
      [id, outcome.state, outcome.uid, outcome.status, outcome.redirectUrl, now, shopId],
    );
    if (!changed) return findOrder(tx, shopId, id);
    const givesBack = changed.holds_unit && (outcome.state === 'declined' || outcome.state === 'invalid');
    if (givesBack) {
      // A shop that made the product unlimited meanwhile has no stock to give back to.
      await tx.query('UPDATE products SET quantity = quantity + 1 WHERE id = $1 AND NOT infinite', [
        changed.product_id,
      ]);
    }
    return changed;
  });
}

/** The product's orders still holding a unit, oldest first. */
export function openOrdersOfProduct(db: Queryable, productId: string, limit: number): Promise<OrderRow[]> {
  return db.query<OrderRow>(
    `SELECT * FROM product_orders WHERE product_id = $1 AND state IN ('charging', 'waiting')
     ORDER BY seq LIMIT $2`,
    [productId, limit],
  );
}
