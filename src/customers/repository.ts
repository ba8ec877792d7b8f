import type { ListParams } from '../core/paging.js';
import type { Queryable, Statement } from '../db/db.js';
import { listPage } from '../db/list.js';
import { shaped, valuesShape } from '../db/rows.js';

export interface CustomerRow {
  id: string;
  shop_id: number;
  first_name: string | null;
  last_name: string | null;
  address: string | null;
  city: string | null;
  country: string | null;
  zip: string | null;
  state: string | null;
  phone: string | null;
  email: string;
  ip: string;
  created_at: Date;
}

export type NewCustomer = Omit<CustomerRow, 'shop_id' | 'created_at'>;

/** The row customerInsert stores. */
export function newCustomerRow(shopId: number, c: NewCustomer, now: Date): CustomerRow {
  return {
    id: c.id,
    first_name: c.first_name,
    last_name: c.last_name,
    address: c.address,
    city: c.city,
    country: c.country,
    zip: c.zip,
    state: c.state,
    phone: c.phone,
    email: c.email,
    ip: c.ip,
    shop_id: shopId,
    created_at: now,
  };
}

/** A new customer's row. */
const CUSTOMER_ROWS = valuesShape(
  'customers',
  'INSERT INTO customers (id, shop_id, first_name, last_name, address, city, country, zip, state, phone, email, ip, created_at)',
  13,
);
const INSERT_RETURNING_SQL = `${CUSTOMER_ROWS.around(CUSTOMER_ROWS.tuple(1, 0))} RETURNING *`;

/**
 * The INSERT of a new customer, to run alone or in a batch; RETURNING the stored row unless told not
 * to, and then as rows that a group of writes may share (db/rows.ts).
 */
export function customerInsert(shopId: number, c: NewCustomer, now: Date, returning = true): Statement {
  const params = [
    c.id,
    shopId,
    c.first_name,
    c.last_name,
    c.address,
    c.city,
    c.country,
    c.zip,
    c.state,
    c.phone,
    c.email,
    c.ip,
    now,
  ];
  return returning ? { sql: INSERT_RETURNING_SQL, params } : shaped(CUSTOMER_ROWS, params);
}

export async function insertCustomer(
  db: Queryable,
  shopId: number,
  c: NewCustomer,
  now: Date,
): Promise<CustomerRow> {
  const insert = customerInsert(shopId, c, now);
  const [row] = await db.query<CustomerRow>(insert.sql, insert.params);
  return row as CustomerRow;
}

export async function findCustomer(
  db: Queryable,
  shopId: number,
  id: string,
): Promise<CustomerRow | undefined> {
  const [row] = await db.query<CustomerRow>('SELECT * FROM customers WHERE shop_id = $1 AND id = $2', [
    shopId,
    id,
  ]);
  return row;
}

/** Several of a shop's customers at once (a page of subscriptions names them). */
export function findCustomers(db: Queryable, shopId: number, ids: string[]): Promise<CustomerRow[]> {
  return db.query<CustomerRow>('SELECT * FROM customers WHERE shop_id = $1 AND id = ANY($2::text[])', [
    shopId,
    ids,
  ]);
}

export function listCustomers(db: Queryable, shopId: number, params: ListParams): Promise<CustomerRow[]> {
  return listPage<CustomerRow>(db, 'customers', shopId, params);
}
