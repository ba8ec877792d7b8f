import type { FastifyPluginAsync } from 'fastify';
import { sendPage } from '../pages/render.js';
import { registerPageScope } from '../pages/scope.js';
import { cabinetLang, requireSession } from './context.js';
import { cabinetProblemPage } from './problem.js';
import { CABINET_SECTIONS } from './sections.js';
import { signInRoutes } from './sign-in.js';

/**
 * The web cabinet, registered under the /cabinet prefix (routes here are relative to it; links in
 * pages are absolute): public sign-in, and behind the session guard every section. Pages, not API:
 * no Basic auth (routes are public to the API's guard), their own error and not-found pages.
 */
export const cabinetRoutes: FastifyPluginAsync = async (app) => {
  app.decorateRequest('cabinet', undefined);
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), public: true };
    route.schema = { ...(route.schema ?? {}), hide: true };
  });
  await registerPageScope(app, { problemPage: cabinetProblemPage, formLimit: 65_536 });
  app.setNotFoundHandler((request, reply) =>
    sendPage(reply, 404, cabinetProblemPage(cabinetLang(request), 'notFound')),
  );
  await signInRoutes(app);
  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', requireSession);
    for (const section of CABINET_SECTIONS) await signedIn.register(section);
  });
};
