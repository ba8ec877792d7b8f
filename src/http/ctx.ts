import type { FastifyRequest } from 'fastify';
import type { Ctx } from '../context.js';
import { shopOf } from './auth.js';

/**
 * The verb context of an authenticated request. A request with an Idempotency-Key works inside the
 * transaction that also stores its answer.
 */
export function ctxOf(request: FastifyRequest): Ctx {
  const services = request.server.services;
  const db = request.keyedTx?.held.db ?? services.db;
  return { ...services, db, log: request.log, shop: shopOf(request) };
}

/** The public address of the API, for building links such as `Link: rel="next"`. */
export function publicUrlOf(request: FastifyRequest): string {
  return `${request.server.services.config.publicUrl}${request.url}`;
}
