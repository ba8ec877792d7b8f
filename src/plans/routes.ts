import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { ListQuery, page } from '../http/pagination.js';
import { errorResponses, IdParams } from '../http/schemas.js';
import { PlanInput, PlanSchema } from './schemas.js';
import { createPlan, getPlan, listPlans } from './service.js';

export const planRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/plans',
    {
      schema: {
        tags: ['plans'],
        summary: 'Create a plan',
        body: PlanInput,
        response: { 201: PlanSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const plan = await createPlan(ctxOf(request), request.body as Record<string, unknown>);
      return reply.code(201).send(plan);
    },
  );

  app.get(
    '/plans/:id',
    {
      schema: {
        tags: ['plans'],
        summary: 'Read a plan',
        params: IdParams,
        response: { 200: PlanSchema, ...errorResponses },
      },
    },
    async (request) => getPlan(ctxOf(request), request.params.id),
  );

  app.get(
    '/plans',
    {
      schema: {
        tags: ['plans'],
        summary: 'List plans, newest first',
        querystring: ListQuery,
        response: { 200: Type.Array(PlanSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const params = parseListQuery(request.query);
      const rows = await listPlans(ctxOf(request), params);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );
};
