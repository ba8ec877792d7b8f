import type { FastifyInstance, HTTPMethods } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ApiError } from '../core/errors.js';
import { sendApiError } from './error-handler.js';

/**
 * Unknown routes answer 404 and known paths with another method answer 405 with `Allow`, both in the
 * contract's JSON shape. Fastify itself answers 404 for both, so every route is mirrored here.
 */
export function registerNotFound(app: FastifyInstance): void {
  const mirror = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethods[];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      try {
        mirror.on(method as HTTPMethod, route.url, () => {});
      } catch {
        // a route registered twice under one method is Fastify's concern, not the mirror's
      }
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter(
      (m) => m !== request.method && mirror.find(m as HTTPMethod, path) !== null,
    );
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendApiError(
        request,
        reply,
        ApiError.base('method_not_allowed', `Method ${request.method} is not allowed here`),
      );
    }
    return sendApiError(request, reply, ApiError.base('not_found', `No route ${request.method} ${path}`));
  });
}
