import type { CustomerRow } from '../../customers/index.js';
import type { Queryable } from '../../db/db.js';
import { emailStartsWith, FEW, type ListStore, walkIndex } from '../query.js';

/** The cabinet's reads of customers: a page of them, and a customer's subscriptions and payments. */

export interface CustomerSearch {
  id?: string | undefined;
  /** The start of the address, in any letter case (the customers_shop_email index of 025). */
  email?: string | undefined;
}

/**
 * One page of a shop's customers, newest first (`size + 1` rows, keyset by seq), read in proportion to
 * the page whatever the statistics say (query.ts, walkIndex). An e-mail's start is first looked up in
 * the customers_shop_email index: when at most FEW customers have it, the page is made of them;
 * when more do, the shop's list is walked from the newest, each row checked, until the page is full.
 */
export async function listCustomerPage(
  db: ListStore,
  shopId: number,
  search: CustomerSearch,
  after: number | undefined,
  size: number,
): Promise<Array<CustomerRow & { seq: string }>> {
  const where = ['shop_id = $1'];
  const values: unknown[] = [shopId, size + 1];
  const param = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  if (search.id !== undefined) where.push(`id = ${param(search.id)}`);
  if (search.email !== undefined) {
    where.push(emailStartsWith(param(search.email)));
    // $2 is the page's size, here the most customers to look up.
    const few = await walkIndex<CustomerRow & { seq: string }>(
      db,
      `SELECT * FROM customers WHERE ${where.join(' AND ')} LIMIT $2`,
      [shopId, FEW + 1, ...values.slice(2)],
    );
    if (few.length <= FEW) {
      return few
        .filter((r) => after === undefined || Number(r.seq) < after)
        .sort((a, b) => Number(b.seq) - Number(a.seq))
        .slice(0, size + 1);
    }
  }
  if (after !== undefined) where.push(`seq < ${param(after)}`);
  // An id is one row at most: read by its key, not in the list's order (walkIndex turns sorting off).
  const order = search.id === undefined ? ' ORDER BY seq DESC' : '';
  return walkIndex(db, `SELECT * FROM customers WHERE ${where.join(' AND ')}${order} LIMIT $2`, values);
}

export interface CustomerSubscription {
  id: string;
  state: string;
  plan_id: string;
  title: string;
  amount: number;
  currency: string;
  created_at: Date;
}

/** A customer's newest subscriptions with their plans (by the subscriptions_customer index of 020). */
export function subscriptionsOf(
  db: Queryable,
  shopId: number,
  customerId: string,
  limit: number,
): Promise<CustomerSubscription[]> {
  return db.query<CustomerSubscription>(
    `SELECT s.id, s.state, s.plan_id, p.title, p.amount, p.currency, s.created_at
       FROM subscriptions s JOIN plans p ON p.id = s.plan_id
      WHERE s.customer_id = $2 AND s.shop_id = $1
      ORDER BY s.seq DESC LIMIT $3`,
    [shopId, customerId, limit],
  );
}

export interface CustomerPayment {
  uid: string;
  type: string;
  status: string;
  amount: number;
  currency: string;
  created_at: Date;
  subscription_id: string;
}

/** The charges made for a customer's subscriptions, newest first. */
export function paymentsOf(
  db: Queryable,
  shopId: number,
  customerId: string,
  limit: number,
): Promise<CustomerPayment[]> {
  return db.query<CustomerPayment>(
    `SELECT t.uid, t.type, t.status, t.amount, t.currency, t.created_at, c.subscription_id
       FROM subscriptions s
       JOIN subscription_charges c ON c.subscription_id = s.id
       JOIN transactions t ON t.uid = c.transaction_uid
      WHERE s.customer_id = $2 AND s.shop_id = $1 AND t.shop_id = $1
      ORDER BY t.seq DESC LIMIT $3`,
    [shopId, customerId, limit],
  );
}
