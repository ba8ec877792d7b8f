import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import { testClockRoutes } from '../billing/routes.js';
import { cabinetRoutes } from '../cabinet/routes.js';
import { ctpRoutes } from '../checkout/api/routes.js';
import { checkoutPageRoutes } from '../checkout/page-routes.js';
import { productPayRoutes } from '../checkout/product/routes.js';
import { widgetRoutes } from '../checkout/widget.js';
import type { Services } from '../context.js';
import { openKeyring } from '../crypto/lookup-keys.js';
import { customerRoutes } from '../customers/routes.js';
import { processPageRoutes } from '../gateway/process-page.js';
import { gatewayRoutes } from '../gateway/routes.js';
import { threeDSecureReturnRoutes } from '../gateway/three-ds-return.js';
import { registerAuth } from '../http/auth.js';
import { answerUnroutable, registerErrorHandler } from '../http/error-handler.js';
import { registerIdempotency } from '../http/idempotency.js';
import { loggerOptions } from '../http/logger.js';
import { registerMetrics } from '../http/metrics.js';
import { registerNotFound } from '../http/not-found.js';
import { registerRateLimit } from '../http/rate-limit.js';
import { sharedSerializers } from '../http/serialization.js';
import { registerValidation } from '../http/validation.js';
import { Budget } from '../limits/budget.js';
import type { LimitStore } from '../limits/store.js';
import { emailRoutes } from '../mail/routes.js';
import { notificationRoutes } from '../notifications/routes.js';
import { assetRoutes } from '../pages/assets.js';
import { registerPageSecurity } from '../pages/security.js';
import { planRoutes } from '../plans/routes.js';
import { productRoutes } from '../products/routes.js';
import { proofRoutes } from '../proofs/routes.js';
import { shopRoutes } from '../shops/routes.js';
import { ShopAuthenticator } from '../shops/service.js';
import { subscriptionRoutes } from '../subscriptions/routes.js';
import { settleSubscriptionOfTransaction } from '../subscriptions/settle.js';
import { openLimitStore } from './limits.js';

export type App = FastifyInstance;

/** The services the app serves with (compose/services.ts builds them); without `log`, the app makes its own. */
export interface BuildOptions extends Omit<Services, 'log'> {
  /** A ready logger (tests pass a silent or capturing one); the app's requests log through it. */
  log?: FastifyInstance['log'];
}

/** The Fastify app: the plumbing of src/http and every feature's routes and pages. */
export async function buildApp(opts: BuildOptions): Promise<App> {
  const { config, db, clock } = opts;
  // The lookup keys are loaded once, before any request computes a stamp or a fingerprint.
  const masterKey = await openKeyring(db, opts.masterKey);
  const app = Fastify({
    ...(opts.log ? { loggerInstance: opts.log } : { logger: loggerOptions(config.logLevel) }),
    bodyLimit: config.bodyLimit,
    genReqId: () => randomUUID(),
    requestIdHeader: 'x-request-id',
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    // A tracking id may be 255 characters, and each may arrive percent-encoded: the router's default
    // of 100 would answer 414 to a lookup of a valid one.
    // Clients post to `/customers/` as often as to `/customers`: one trailing slash names the same route.
    routerOptions: { maxParamLength: 768, ignoreTrailingSlash: true },
    frameworkErrors: answerUnroutable,
    ajv: {
      customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false },
    },
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Fastify parses text/plain by default; the API speaks JSON only, so such a body is a 415, not a
  // string that later fails validation as "not an object".
  app.removeContentTypeParser('text/plain');

  // The services bring the limit store (compose/services.ts); an app built without one opens the
  // configured one and closes it with itself.
  const limits: LimitStore = opts.limits ?? openLimitStore(config, db);
  if (!opts.limits) app.addHook('onClose', () => limits.close());
  const services: Services = { ...opts, masterKey, log: app.log, limits };
  app.decorate('services', services);
  app.decorate('limits', limits);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // A POST, PUT or PATCH with no body at all is validated as an empty object, so the answer names the
  // missing fields (or, for PATCH, changes nothing) instead of complaining about the body.
  app.addHook('preValidation', async (request) => {
    if (
      request.body == null &&
      (request.method === 'POST' || request.method === 'PUT' || request.method === 'PATCH')
    )
      request.body = {};
  });

  registerValidation(app);
  registerErrorHandler(app);
  registerNotFound(app);
  const shopAuthenticator = new ShopAuthenticator(db, undefined, config.gatewayToken);
  app.decorate('shopAuthenticator', shopAuthenticator);
  registerAuth(app, shopAuthenticator);
  if (config.apiRateLimit) registerRateLimit(app, new Budget(limits, config.apiRateLimit, clock), clock);
  registerIdempotency(app, db, clock, masterKey);
  app.decorate('metrics', registerMetrics(app, config));
  await registerPageSecurity(app, config.publicUrl);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Kopek API',
        version: '1',
        description: 'Products, customers, plans, subscriptions, payment proof and the card gateway.',
      },
      servers: [{ url: config.publicUrl }],
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
      security: [{ basic: [] }],
    },
  });
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), public: true };
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });

  // Liveness: the process answers. It asks nothing of the store, so it never waits behind the store's
  // work (on the embedded store, statements run one at a time on this thread). Readiness asks the store.
  app.get('/health', { config: { public: true }, schema: { hide: true } }, async () => ({
    status: 'ok',
    store: db.kind,
  }));
  app.get('/ready', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    try {
      await db.query('SELECT 1');
      return { status: 'ok', store: db.kind };
    } catch {
      return reply.code(503).send({ status: 'unavailable', store: db.kind });
    }
  });

  await app.register(assetRoutes);
  await app.register(productRoutes);
  await app.register(productPayRoutes);
  await app.register(customerRoutes);
  await app.register(planRoutes);
  await app.register(gatewayRoutes);
  // The gateway's 3-D Secure step settles the subscription it charged for, without knowing it.
  const afterThreeDs = { afterThreeDs: settleSubscriptionOfTransaction };
  await app.register(processPageRoutes, afterThreeDs);
  await app.register(threeDSecureReturnRoutes, afterThreeDs);
  await app.register(proofRoutes);
  await app.register(subscriptionRoutes);
  await app.register(shopRoutes);
  await app.register(testClockRoutes);
  await app.register(emailRoutes);
  await app.register(notificationRoutes);
  await app.register(ctpRoutes);
  await app.register(checkoutPageRoutes);
  await app.register(widgetRoutes);
  await app.register(cabinetRoutes, { prefix: '/cabinet' });
  return app;
}
