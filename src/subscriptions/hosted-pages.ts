/**
 * The hosted payment pages of redirect subscriptions (table checkouts): opened with the subscription,
 * closed when it is cancelled, completed when paid, claimed by the expiry sweep.
 */
import { FREE_PLAN, INDEX_ORDER_PLAN } from '../db/claim-plan.js';
import type { Queryable, Tx } from '../db/db.js';
import { randomToken } from '../ids.js';
import { CHECKOUT_TTL_MS } from '../pages/checkout-url.js';

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

/** Ends the open hosted pages of a subscription now (it was cancelled): nobody can pay there any more. */
export async function closeCheckoutsOf(db: Queryable, subscriptionId: string, now: Date): Promise<void> {
  await db.query(
    'UPDATE checkouts SET expires_at = $2 WHERE subscription_id = $1 AND completed_at IS NULL AND expires_at > $2',
    [subscriptionId, now],
  );
}

/** Locks the checkout while its page is paid, so two posts of one form are taken one after the other. */
export async function lockCheckout(db: Tx, token: string): Promise<CheckoutRow | undefined> {
  const [row] = await db.query<CheckoutRow>('SELECT * FROM checkouts WHERE token = $1 FOR UPDATE', [token]);
  return row;
}

/** The customer gave their card on the page: the token is used. */
export async function completeCheckout(db: Queryable, token: string, now: Date): Promise<void> {
  await db.query('UPDATE checkouts SET completed_at = $2 WHERE token = $1 AND completed_at IS NULL', [
    token,
    now,
  ]);
}

/**
 * Claims up to `limit` checkouts whose page expired unpaid and whose expiry nobody announced yet, and
 * marks them announced in the caller's transaction. Expired on the shop's own clock (a test shop's may
 * run ahead of `realNow`). SKIP LOCKED: instances sweeping at once each take different rows. The
 * page's subscription is locked with it, and a page whose subscription another request holds (a
 * cancel, which locks the subscription and then closes its pages) is left for a later sweep: waiting
 * for it while holding the page would deadlock with that request. In index order whatever the
 * statistics say (INDEX_ORDER_PLAN), and only as far as the latest shop's clock: what it reads grows
 * with what expired, not with how many pages are open.
 */
export async function claimExpiredCheckouts(
  db: Tx,
  realNow: Date,
  limit: number,
  shopId?: number,
): Promise<CheckoutRow[]> {
  await db.query(INDEX_ORDER_PLAN);
  const claimed = await db.query<CheckoutRow>(
    `UPDATE checkouts SET expiry_announced_at = $1
     WHERE token IN (
       SELECT c.token FROM checkouts c JOIN shops s ON s.id = c.shop_id
         JOIN subscriptions sub ON sub.id = c.subscription_id AND sub.shop_id = c.shop_id
       WHERE ${UNANNOUNCED_PAGE} AND ($3::int IS NULL OR c.shop_id = $3::int)
         AND c.expires_at <= $1::timestamptz + (CASE WHEN s.test THEN s.clock_offset_ms ELSE 0 END) * interval '1 millisecond'
         AND c.expires_at <= $1::timestamptz + (SELECT max(clock_offset_ms) FROM shops) * interval '1 millisecond'
       ORDER BY c.expires_at LIMIT $2
       FOR UPDATE OF c, sub SKIP LOCKED)
     RETURNING *`,
    [realNow, limit, shopId ?? null],
  );
  await db.query(FREE_PLAN);
  return claimed;
}

/**
 * A subscription page whose expiry is still to be announced (when it expires unpaid). Only a page
 * with its subscription counts (claimExpiredCheckouts joins it): a test clock's advance must not stop
 * at the expiry of a page the sweep never claims.
 */
export const UNANNOUNCED_PAGE =
  'c.completed_at IS NULL AND c.expiry_announced_at IS NULL AND c.subscription_id IS NOT NULL';
