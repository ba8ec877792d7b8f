import type { CustomerRow } from '../../customers/index.js';
import type { Queryable } from '../../db/db.js';
import { emailStartsWith } from '../query.js';

/** The cabinet's reads of customers: a page of them, and a customer's subscriptions and payments. */

export interface CustomerSearch {
  id?: string | undefined;
  /** The start of the address, in any letter case (the customers_shop_email index of 025). */
  email?: string | undefined;
}

export function listCustomerPage(
  db: Queryable,
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
  if (search.email !== undefined) where.push(emailStartsWith(param(search.email)));
  if (after !== undefined) where.push(`seq < ${param(after)}`);
  return db.query(`SELECT * FROM customers WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $2`, values);
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
