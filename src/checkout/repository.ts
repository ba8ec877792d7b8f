import type { Queryable } from '../db/db.js';
import { randomToken } from '../ids.js';

/** How long a customer has to complete a hosted payment page. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;

export interface CheckoutRow {
  token: string;
  shop_id: number;
  subscription_id: string | null;
  created_at: Date;
  expires_at: Date;
  completed_at: Date | null;
}

export async function openCheckout(
  db: Queryable,
  shopId: number,
  subscriptionId: string,
  now: Date,
): Promise<CheckoutRow> {
  const [row] = await db.query<CheckoutRow>(
    `INSERT INTO checkouts (token, shop_id, subscription_id, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [randomToken(40), shopId, subscriptionId, now, new Date(now.getTime() + CHECKOUT_TTL_MS)],
  );
  return row as CheckoutRow;
}

export async function checkoutOfSubscription(
  db: Queryable,
  subscriptionId: string,
): Promise<CheckoutRow | undefined> {
  const [row] = await db.query<CheckoutRow>(
    'SELECT * FROM checkouts WHERE subscription_id = $1 ORDER BY created_at DESC LIMIT 1',
    [subscriptionId],
  );
  return row;
}

export async function findCheckout(db: Queryable, token: string): Promise<CheckoutRow | undefined> {
  const [row] = await db.query<CheckoutRow>('SELECT * FROM checkouts WHERE token = $1', [token]);
  return row;
}

export function checkoutUrl(base: string, token: string): string {
  return `${base}/v2/checkout?token=${encodeURIComponent(token)}`;
}

/** Ends the open hosted pages of a subscription now (it was cancelled): nobody can pay there any more. */
export async function closeCheckoutsOf(db: Queryable, subscriptionId: string, now: Date): Promise<void> {
  await db.query(
    'UPDATE checkouts SET expires_at = $2 WHERE subscription_id = $1 AND completed_at IS NULL AND expires_at > $2',
    [subscriptionId, now],
  );
}
