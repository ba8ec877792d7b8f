import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import { ApiError } from '../core/errors.js';
import type { Budget } from '../limits/budget.js';

/** How long requests go on uncounted after the limit store failed to answer. */
export const UNCOUNTED_MS = 5_000;

/** The key a shop's API budget is counted under in the limit store. */
export const apiBudgetKey = (shopId: number) => `api:shop:${shopId}`;

/**
 * The API's per-shop rate limit (API_RATE_LIMIT per API_RATE_WINDOW): every request a shop's
 * credentials authenticate spends one of its budget, shared by every instance on the limit store.
 * Past it: 429 in the contract's error shape, with `Retry-After` in whole seconds until the window
 * ends. Requests without a shop (public routes, the cabinet's pages, those refused with 401) are not
 * counted here, nor the calls of another Kopek deployment with the shop's gateway credential (an API
 * deployment calling a separate gateway deployment): the request they serve was counted there.
 * Registered after authentication, so it runs once the shop is known.
 *
 * Should the store fail (Redis or PostgreSQL unreachable), the request goes on and the failure is
 * logged: a limit that cannot be counted does not stop payments. For UNCOUNTED_MS after a failure
 * the store is not asked at all, so requests do not each wait for an unreachable store.
 */
export function registerRateLimit(app: FastifyInstance, budget: Budget, clock: Clock): void {
  let uncountedUntil = 0;
  app.addHook('onRequest', async (request, reply) => {
    const shop = request.shop;
    // Another Kopek deployment's call for a request it counted already (GATEWAY_TOKEN's credential).
    if (!shop || request.serviceCall) return;
    if (uncountedUntil > 0 && clock.now().getTime() < uncountedUntil) return;
    let verdict: Awaited<ReturnType<Budget['take']>>;
    try {
      verdict = await budget.take(apiBudgetKey(shop.id));
    } catch (err) {
      uncountedUntil = clock.now().getTime() + UNCOUNTED_MS;
      request.log.warn(
        { err, uncountedMs: UNCOUNTED_MS },
        'the API rate limit could not be counted; requests go on uncounted for a while',
      );
      return;
    }
    uncountedUntil = 0;
    if (verdict.ok) return;
    const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    reply.header('retry-after', String(seconds));
    throw ApiError.base(
      'rate_limited',
      `Too many requests for this shop; retry after ${seconds} second${seconds === 1 ? '' : 's'}`,
    );
  });
}
