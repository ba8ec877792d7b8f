import type { FastifyPluginAsync } from 'fastify';
import { customersSection } from './customers/routes.js';
import { emailsSection } from './emails/routes.js';
import { notificationsSection } from './notifications/routes.js';
import { overviewRoutes } from './overview/routes.js';
import { paymentsSection } from './payments/routes.js';
import { productsSection } from './products/routes.js';
import { proofsSection } from './proofs/routes.js';
import { settingsSection } from './settings/routes.js';
import { subscriptionRoutes } from './subscriptions/routes.js';

/**
 * The signed-in sections, each a plugin of its own folder (src/cabinet/<section>/routes.tsx).
 * Every one runs behind the session guard (routes.ts) under the /cabinet prefix, so a section's
 * routes are written relative to it ('/subscriptions/:id'); a handler reads its shop with `cabinetOf`.
 */
export const CABINET_SECTIONS: FastifyPluginAsync[] = [
  overviewRoutes,
  subscriptionRoutes,
  paymentsSection,
  productsSection,
  customersSection,
  proofsSection,
  notificationsSection,
  emailsSection,
  settingsSection,
];
