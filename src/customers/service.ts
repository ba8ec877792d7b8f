import type { Ctx } from '../context.js';
import { addressCode } from '../core/address.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import type { ListParams } from '../core/paging.js';
import { checkBody } from '../core/schema-check.js';
import { newId } from '../ids.js';
import {
  type CustomerRow,
  findCustomer,
  insertCustomer,
  listCustomers,
  type NewCustomer,
} from './repository.js';
import { CustomerInput } from './schemas.js';

export interface Customer {
  id: string;
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
}

export function toCustomer(r: CustomerRow): Customer {
  return {
    id: r.id,
    first_name: r.first_name,
    last_name: r.last_name,
    address: r.address,
    city: r.city,
    country: r.country,
    zip: r.zip,
    state: r.state,
    phone: r.phone,
    email: r.email,
    ip: r.ip,
  };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** Country and state codes are taken in any case and kept as ISO and the postal services write them. */
const upper = (v: string | null): string | null => (v === null ? null : addressCode(v));

/**
 * Checks customer data against its schema (also when it arrives inside a subscription or a payment
 * form, under `prefix`), recording every broken rule, and returns the record to store without an id.
 * The record is meaningful only when nothing was recorded.
 */
export function validateCustomer(
  body: Record<string, unknown>,
  errors: ErrorCollector,
  prefix: string[] = [],
) {
  checkBody(CustomerInput, body, errors, prefix);
  return {
    first_name: text(body.first_name),
    last_name: text(body.last_name),
    address: text(body.address),
    city: text(body.city),
    country: upper(text(body.country)),
    zip: text(body.zip),
    state: upper(text(body.state)),
    phone: text(body.phone),
    email: text(body.email) ?? '',
    ip: text(body.ip) ?? '',
  } satisfies Omit<NewCustomer, 'id'>;
}

export async function createCustomer(ctx: Ctx, input: object): Promise<Customer> {
  const errors = new ErrorCollector();
  const data = validateCustomer(input as Record<string, unknown>, errors);
  errors.throwIfAny();
  const row = await insertCustomer(ctx.db, ctx.shop.id, { id: newId('cst'), ...data }, ctx.clock.now());
  return toCustomer(row);
}

export async function getCustomer(ctx: Ctx, id: string): Promise<Customer> {
  const row = await findCustomer(ctx.db, ctx.shop.id, id);
  if (!row) throw ApiError.notFound();
  return toCustomer(row);
}

export async function listCustomersOfShop(ctx: Ctx, params: ListParams): Promise<Customer[]> {
  return (await listCustomers(ctx.db, ctx.shop.id, params)).map(toCustomer);
}
