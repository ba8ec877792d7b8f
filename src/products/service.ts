import { isoString } from '../clock.js';
import type { Config } from '../config.js';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import type { ListParams } from '../core/paging.js';
import { isId, newId } from '../ids.js';
import { type ProductData, validateProduct } from './input.js';
import {
  findProduct,
  findProductForUpdate,
  insertProduct,
  listProducts,
  type ProductRow,
  updateProductRow,
} from './repository.js';

/** A product as the API answers: its data (without the stored-only members) plus id, times and links. */
export type Product = Omit<ProductData, 'expires_at' | 'extra'> & {
  id: string;
  created_at: string;
  updated_at: string;
  pay_url: string;
  payment_url: string;
  confirm_url: string;
};

export function payUrl(config: Config, productId: string): string {
  return `${config.publicUrl}/products/${productId}/pay`;
}

export function toProduct(r: ProductRow, config: Config): Product {
  const { shop_id, expires_at, extra, created_at, updated_at, ...fields } = r;
  const pay = payUrl(config, r.id);
  return {
    ...fields,
    quantity: r.infinite ? null : r.quantity,
    created_at: isoString(created_at),
    updated_at: isoString(updated_at),
    pay_url: pay,
    payment_url: pay,
    confirm_url: `${config.checkoutUrl}/v2/confirm_order/${r.id}/${shop_id}`,
  };
}

/** The seed answers a lookup with a malformed product id with 302 and an error body, not 404. */
export const malformedProductId = (): ApiError => new ApiError('malformed_id', { id: ['is invalid'] });

function assertProductId(id: string): void {
  if (!isId('prd', id)) throw malformedProductId();
}

/** A test shop takes no real money: each of its products is a test product, whatever was sent. */
function inShopMode(ctx: Ctx, data: ProductData): ProductData {
  return ctx.shop.test ? { ...data, test: true } : data;
}

export async function createProduct(ctx: Ctx, input: Record<string, unknown>): Promise<Product> {
  const errors = new ErrorCollector();
  const data = inShopMode(ctx, validateProduct(input, ctx.shop.id, errors, ctx.clock.now()));
  errors.throwIfAny();
  const row = await insertProduct(ctx.db, ctx.shop.id, newId('prd'), data, ctx.clock.now());
  return toProduct(row, ctx.config);
}

export async function getProduct(ctx: Ctx, id: string): Promise<Product> {
  assertProductId(id);
  const row = await findProduct(ctx.db, ctx.shop.id, id);
  if (!row) throw ApiError.notFound();
  return toProduct(row, ctx.config);
}

export async function listProductsOfShop(ctx: Ctx, params: ListParams): Promise<Product[]> {
  return (await listProducts(ctx.db, ctx.shop.id, params)).map((r) => toProduct(r, ctx.config));
}

/** A stored product in the shape of a request, so an update can be laid over it and checked whole. */
function asRequest(r: ProductRow): Record<string, unknown> {
  const { id, shop_id, created_at, updated_at, expires_at, extra, ...fields } = r;
  return { ...fields, ...extra };
}

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * The update laid over the stored product. A field sent as null clears it (and a required one then
 * fails as blank). Sending a quantity alone makes the stock finite, as it would on create; sending
 * `visible` replaces `visible_fields`.
 */
export function mergeUpdate(stored: ProductRow, patch: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...asRequest(stored), ...patch };
  if (present(patch.quantity) && !present(patch.infinite)) delete merged.infinite;
  if ('visible' in patch && !('visible_fields' in patch)) delete merged.visible_fields;
  return merged;
}

/** Partial update: the merged product is validated as a whole, so it never becomes invalid. */
export async function updateProduct(ctx: Ctx, id: string, patch: Record<string, unknown>): Promise<void> {
  assertProductId(id);
  await ctx.db.tx(async (tx) => {
    const stored = await findProductForUpdate(tx, ctx.shop.id, id);
    if (!stored) throw ApiError.notFound();
    const errors = new ErrorCollector();
    // A new expiry must lie ahead; the stored one, sent back unchanged with the rest, may have passed.
    const newExpiry = typeof patch.expired_at === 'string' && patch.expired_at !== stored.expired_at;
    const now = newExpiry ? ctx.clock.now() : null;
    const data = inShopMode(ctx, validateProduct(mergeUpdate(stored, patch), ctx.shop.id, errors, now));
    errors.throwIfAny();
    await updateProductRow(tx, ctx.shop.id, id, data, ctx.clock.now());
  });
}
