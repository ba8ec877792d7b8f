import type { FastifyPluginAsync } from 'fastify';

/**
 * The signed-in sections, each a plugin of its own folder (src/cabinet/<section>/routes.tsx).
 * Every one runs behind the session guard (routes.ts) under the /cabinet prefix, so a section's
 * routes are written relative to it ('/subscriptions/:id'); a handler reads its shop with `cabinetOf`.
 */
export const CABINET_SECTIONS: FastifyPluginAsync[] = [];
