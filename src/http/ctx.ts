import type { FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { type Ctx, type Services, shopClock } from '../context.js';
import type { LimitStore } from '../limits/store.js';
import { type ShopCache, shopOf } from './auth.js';

// What the app (compose/app.ts) decorates itself with, for routes to reach through `request.server`.
declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    /** Where the limits count (services.limits, always set on the app). */
    limits: LimitStore;
    /** The registry /metrics answers from: other parts of a serving process add their metrics here. */
    metrics: Registry;
    /** Caches shops for a few seconds: whatever changes a shop's row tells it to forget that shop. */
    shopAuthenticator: ShopCache;
  }
}

/**
 * The services as a request sees them, on real time. A request with an Idempotency-Key works inside
 * the transaction that also stores its answer.
 */
export function servicesOf(request: FastifyRequest): Services {
  const services = request.server.services;
  const db = request.keyedTx?.held.db ?? services.db;
  return { ...services, db, log: request.log };
}

/**
 * The verb context of an authenticated request, on the shop's own clock (a test shop's test clock).
 * A keyed request in the phased mode brings its recovery (`keyed`).
 */
export function ctxOf(request: FastifyRequest): Ctx {
  const services = request.server.services;
  const shop = shopOf(request);
  // One object per request, built directly: this runs on every API call.
  const db = request.keyedTx?.held.db ?? services.db;
  const keyed = request.keyedRun?.keyed;
  return { ...services, db, log: request.log, clock: shopClock(services.clock, shop), shop, keyed };
}

/** The public address of the API, for building links such as `Link: rel="next"`. */
export function publicUrlOf(request: FastifyRequest): string {
  return `${request.server.services.config.publicUrl}${request.url}`;
}
