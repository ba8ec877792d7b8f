import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { ListQuery, page } from '../http/pagination.js';
import { errorResponses, IdParams, Nullable } from '../http/schemas.js';
import { CustomerInput } from './schemas.js';
import { createCustomer, getCustomer, listCustomersOfShop } from './service.js';

export const CustomerSchema = Type.Object(
  {
    id: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    address: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String()),
    zip: Nullable(Type.String()),
    state: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    email: Type.String(),
    ip: Type.String(),
  },
  { $id: 'Customer' },
);

export const customerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/customers',
    {
      schema: {
        tags: ['customers'],
        summary: 'Create a customer',
        body: CustomerInput,
        response: { 201: CustomerSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const customer = await createCustomer(ctxOf(request), request.body);
      return reply.code(201).send(customer);
    },
  );

  app.get(
    '/customers/:id',
    {
      schema: {
        tags: ['customers'],
        summary: 'Read a customer',
        params: IdParams,
        response: { 200: CustomerSchema, ...errorResponses },
      },
    },
    async (request) => getCustomer(ctxOf(request), request.params.id),
  );

  app.get(
    '/customers',
    {
      schema: {
        tags: ['customers'],
        summary: 'List customers, newest first',
        querystring: ListQuery,
        response: { 200: Type.Array(CustomerSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const params = parseListQuery(request.query);
      const rows = await listCustomersOfShop(ctxOf(request), params);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );
};
