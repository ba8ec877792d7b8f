import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseListQuery } from '../core/paging.js';
import { LANGUAGES } from '../core/rules.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { ListQuery, page } from '../http/pagination.js';
import { ErrorBodySchema, errorResponses, FreeObject, IdParams, Nullable } from '../http/schemas.js';
import { KEPT_PLATFORM_FIELDS, TRANSACTION_TYPES, VISIBLE_FIELDS } from './input.js';
import {
  createProduct,
  getProduct,
  listProductsOfShop,
  malformedProductId,
  updateProduct,
} from './service.js';

const WholeNumber = (description: string) =>
  Type.Union([Type.Integer(), Type.String({ pattern: '^\\d+$' })], { description });
const VisibleFields = Type.Array(Type.Union(VISIBLE_FIELDS.map((v) => Type.Literal(v))), {
  description: 'Buyer fields shown, and required, on the payment page',
});
const optionalUrl = (description: string) =>
  Type.Optional(Nullable(Type.String({ format: 'uri', description })));

/** Create request; an update takes any subset of the same fields. Documents the body and types it. */
export const ProductInput = Type.Object({
  name: Type.String({ maxLength: 255 }),
  description: Type.String({ maxLength: 2000 }),
  currency: Type.String({ description: 'ISO 4217 alpha-3 code, or BTC, ETH, USDT, USDC' }),
  amount: WholeNumber('Price in minor units, greater than 0'),
  quantity: Type.Optional(Nullable(WholeNumber('Units in stock; omit when infinite is true'))),
  infinite: Type.Optional(
    Type.Boolean({ description: 'Unlimited stock; the default when no quantity is sent' }),
  ),
  visible_fields: Type.Optional(VisibleFields),
  visible: Type.Optional(Type.Array(Type.String(), { description: 'Another name for visible_fields' })),
  test: Type.Optional(Type.Boolean()),
  immortal: Type.Optional(Type.Boolean({ description: 'Unlimited time to pay' })),
  expired_at: Type.Optional(
    Nullable(Type.String({ description: 'YYYY-MM-DDThh:mm:ssTZD or YYYY-MM-DD (end of that day, UTC)' })),
  ),
  return_url: optionalUrl('Where the buyer goes after paying; the shop URL when absent'),
  shop_id: Type.Optional(
    Type.Union([Type.Integer(), Type.String()], { description: 'Must be your shop id' }),
  ),
  language: Type.Optional(
    Type.Union(
      LANGUAGES.map((l) => Type.Literal(l)),
      { default: 'en' },
    ),
  ),
  transaction_type: Type.Optional(
    Type.Union(
      TRANSACTION_TYPES.map((t) => Type.Literal(t)),
      { default: 'payment' },
    ),
  ),
  additional_data: Type.Optional(FreeObject),
  ...Object.fromEntries(
    KEPT_PLATFORM_FIELDS.map((f) => [f, optionalUrl('Accepted and kept; Kopek does not act on it')]),
  ),
});

export const ProductSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    currency: Type.String(),
    amount: Type.Integer(),
    quantity: Nullable(Type.Integer()),
    infinite: Type.Boolean(),
    visible_fields: Type.Array(Type.String()),
    test: Type.Boolean(),
    immortal: Type.Boolean(),
    expired_at: Nullable(Type.String()),
    return_url: Nullable(Type.String()),
    language: Type.String(),
    transaction_type: Type.String(),
    additional_data: FreeObject,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    pay_url: Type.String(),
    payment_url: Type.String(),
    confirm_url: Type.String(),
  },
  { $id: 'Product' },
);

// The seed's answer to a malformed product id: 302 with the error body.
const malformedId = { 302: ErrorBodySchema };
const config = { malformedParam: malformedProductId };

export const productRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/products',
    {
      schema: {
        tags: ['products'],
        summary: 'Create a product and its payment link',
        body: ProductInput,
        response: { 201: ProductSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const product = await createProduct(ctxOf(request), request.body as Record<string, unknown>);
      return reply.code(201).send(product);
    },
  );

  app.get(
    '/products/:id',
    {
      config,
      schema: {
        tags: ['products'],
        summary: 'Read a product',
        params: IdParams,
        response: { 200: ProductSchema, ...malformedId, ...errorResponses },
      },
    },
    async (request) => getProduct(ctxOf(request), request.params.id),
  );

  app.get(
    '/products',
    {
      schema: {
        tags: ['products'],
        summary: 'List products, newest first',
        querystring: ListQuery,
        response: { 200: Type.Array(ProductSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const params = parseListQuery(request.query);
      const rows = await listProductsOfShop(ctxOf(request), params);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );

  app.put(
    '/products/:id',
    {
      config,
      schema: {
        tags: ['products'],
        summary: 'Update any fields of a product',
        params: IdParams,
        body: Type.Partial(ProductInput),
        response: {
          204: Type.Null({ description: 'Updated; empty body' }),
          ...malformedId,
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      await updateProduct(ctxOf(request), request.params.id, request.body as Record<string, unknown>);
      return reply.code(204).send(null);
    },
  );
};
