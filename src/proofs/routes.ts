import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

export const proofRoutes: FastifyPluginAsyncTypebox = async () => {};
