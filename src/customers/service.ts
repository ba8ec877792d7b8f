import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import type { ListParams } from '../core/paging.js';
import { Fields, isCountry, isEmail, isIpAddress } from '../core/rules.js';
import { newId } from '../ids.js';
import {
  type CustomerRow,
  findCustomer,
  insertCustomer,
  listCustomers,
  type NewCustomer,
} from './repository.js';

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

const US_ZIP = /^\d{5}(-\d{4})?$/;

/**
 * Validates customer data (also when it arrives inside a subscription, under `prefix`) and returns
 * the normalised record without an id. Every broken rule is reported, not only the first.
 */
export function validateCustomer(
  body: Record<string, unknown>,
  errors: ErrorCollector,
  prefix: string[] = [],
) {
  const f = new Fields(body, errors, prefix);
  const text = (name: string, max = 255) => f.string(name, { max }) ?? null;
  const email = f.string('email', { required: true, max: 254 });
  if (email !== undefined) f.check('email', isEmail(email));
  const ip = f.string('ip', { required: true, max: 45 });
  if (ip !== undefined) f.check('ip', isIpAddress(ip));
  const country = f.string('country', { max: 2 });
  if (country !== undefined) f.check('country', isCountry(country));
  const zip = text('zip', 16);
  if (zip !== null && country === 'US')
    f.check('zip', US_ZIP.test(zip), 'must be NNNNN or NNNNN-NNNN for the US');
  const state = text('state', 2);
  if (state !== null) {
    if (f.check('state', /^[A-Za-z]{2}$/.test(state), 'must be two letters')) {
      f.check('state', country === 'US' || country === 'CA', 'is allowed only when country is US or CA');
    }
  }
  return {
    first_name: text('first_name'),
    last_name: text('last_name'),
    address: text('address'),
    city: text('city'),
    country: country ?? null,
    zip,
    state,
    phone: text('phone', 32),
    email: email ?? '',
    ip: ip ?? '',
  } satisfies Omit<NewCustomer, 'id'>;
}

export async function createCustomer(ctx: Ctx, input: Record<string, unknown>): Promise<Customer> {
  const errors = new ErrorCollector();
  const data = validateCustomer(input, errors);
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
