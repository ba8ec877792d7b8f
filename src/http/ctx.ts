import type { FastifyRequest } from 'fastify';
import type { Ctx } from '../context.js';
import { shopOf } from './auth.js';

/** The verb context of an authenticated request. */
export function ctxOf(request: FastifyRequest): Ctx {
  return { ...request.server.services, log: request.log, shop: shopOf(request) };
}

/** The public address of the API, for building links such as `Link: rel="next"`. */
export function publicUrlOf(request: FastifyRequest): string {
  return `${request.server.services.config.publicUrl}${request.url}`;
}
