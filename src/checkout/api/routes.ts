import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../../core/errors.js';
import { gatewayErrorBody } from '../../gateway/error-body.js';
import { ctxOf } from '../../http/ctx.js';
import { createCtpCheckout, getCtpCheckout } from './service.js';

/**
 * The platform's checkout API: `POST /ctp/api/checkouts` opens a hosted page for one payment,
 * authorization or card tokenization; `GET /ctp/api/checkouts/{token}` tells how it went. Errors in
 * the gateway's shape (`{"response": {message, errors}}`), as the platform answers them; an unknown
 * token is the platform's `{"message": "Record not found"}`.
 */

const config = { errorEnvelope: gatewayErrorBody };
const tags = ['checkout'];

export const ctpRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post(
    '/ctp/api/checkouts',
    {
      config,
      schema: {
        tags,
        summary: 'Open a hosted checkout page for a payment, an authorization or a card tokenization',
        headers: Type.Object({ 'x-api-version': Type.Optional(Type.String()) }),
        body: Type.Object({}, { additionalProperties: true }),
      },
    },
    async (request, reply) => {
      const ctx = ctxOf(request);
      const checkout = await createCtpCheckout(ctx, request.body, request.headers['x-api-version']);
      return reply.code(201).send({ checkout });
    },
  );

  app.get(
    '/ctp/api/checkouts/:token',
    {
      config,
      schema: {
        tags,
        summary: 'A checkout: finished, expired, its status and the transaction it made',
        params: Type.Object({ token: Type.String() }),
      },
    },
    async (request, reply) => {
      const ctx = ctxOf(request);
      try {
        return { checkout: await getCtpCheckout(ctx, request.params.token) };
      } catch (err) {
        if (err instanceof ApiError && err.code === 'not_found')
          // The platform's `{"message": "Record not found"}`, not wrapped in `response`, with Kopek's
          // errors.base beside it (decisions.md: every 404 has the same shape).
          return reply.code(404).send(err.toBody());
        throw err;
      }
    },
  );
};
