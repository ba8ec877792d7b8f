import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ErrorBody } from '../../core/errors.js';
import { gatewayErrorBody, isNotFound, NOT_FOUND } from '../../gateway/index.js';
import { ctxOf } from '../../http/ctx.js';
import { CheckoutBody } from './input.js';
import { createCtpCheckout, getCtpCheckout } from './service.js';

/**
 * The platform's checkout API: `POST /ctp/api/checkouts` opens a hosted page for one payment,
 * authorization or card tokenization; `GET /ctp/api/checkouts/{token}` tells how it went. Errors in
 * the gateway's shape (`{"response": {message, errors}}`), as the platform answers them; an unknown
 * token is exactly the platform's `{"message": "Record not found"}`.
 */

const config = { errorEnvelope: gatewayErrorBody };

/**
 * GET's errors: an unknown token (any token, however malformed) is exactly the platform's
 * `{"message": "Record not found"}` (decisions.md, Checkout API), not wrapped in `response` and with
 * nothing beside it; every other error in the gateway's shape.
 */
const readConfig = {
  errorEnvelope: (body: ErrorBody) =>
    body.message === NOT_FOUND && isNotFound(body.errors) ? { message: NOT_FOUND } : gatewayErrorBody(body),
};

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
        body: CheckoutBody,
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
      config: readConfig,
      schema: {
        tags,
        summary: 'A checkout: finished, expired, its status and the transaction it made',
        params: Type.Object({ token: Type.String() }),
      },
    },
    async (request) => ({ checkout: await getCtpCheckout(ctxOf(request), request.params.token) }),
  );
};
