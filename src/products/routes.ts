import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { ListQuery, page } from '../http/pagination.js';
import { ErrorBodySchema, errorResponses, FreeObject, IdParams, Nullable } from '../http/schemas.js';
import { ProductInput, ProductUpdate } from './input.js';
import {
  createProduct,
  getProduct,
  listProductsOfShop,
  malformedProductId,
  updateProduct,
} from './service.js';

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
        body: ProductUpdate,
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
