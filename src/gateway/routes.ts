import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

export const gatewayRoutes: FastifyPluginAsyncTypebox = async () => {};
