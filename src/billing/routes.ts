import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { shopOf } from '../http/auth.js';
import { servicesOf } from '../http/ctx.js';
import { ErrorBodySchema, errorResponses } from '../http/schemas.js';
import { advanceTestClock, readTestClock } from './test-clock.js';
import { AdvanceInput } from './test-clock-input.js';
import { resetTestShop } from './test-clock-reset.js';

const TestClock = Type.Object(
  {
    now: Type.String({ description: "The shop's current time, ISO 8601 UTC with milliseconds" }),
    offset_seconds: Type.Number({ description: 'How far it runs ahead of real time (a fraction: ms)' }),
    time_zone: Type.String({ description: "The shop's time zone: `by` durations follow its calendar" }),
  },
  { $id: 'TestClock' },
);

const count = (description: string) => Type.Integer({ description });

const AdvanceSummary = Type.Object({
  test_clock: TestClock,
  advanced_from: Type.String({ description: "The shop's time before the advance" }),
  billing: Type.Object(
    {
      runs: count('Billing runs, one at each instant something fell due'),
      charged: count('Charge attempts made'),
      successful: count('Attempts the gateway answered successful'),
      failed: count('Attempts declined'),
      errors: count('Attempts that ended in a gateway error or refusal'),
      unknown: count('Attempts without an answer yet; a later run resolves them'),
      resolved: count('Open attempts settled by asking the gateway'),
      ended: count('Subscriptions ended after their last billing cycle'),
    },
    { description: 'What ran on the way, summed over the runs' },
  ),
  expired_checkouts: count('Checkout tokens that expired unpaid on the way, each announced at its expiry'),
});

/** Forgets the cached shop, so the next request of this process sees the shop's new time. */
function forgetShop(request: FastifyRequest): void {
  if (request.shop) request.server.shopAuthenticator.forget(request.shop.id);
}

const deleted = (what: string) => count(`${what} deleted`);

const ResetSummary = Type.Object({
  test_clock: TestClock,
  deleted: Type.Object(
    {
      customers: deleted('Customers'),
      subscriptions: deleted('Subscriptions (with their charges and checkout pages)'),
      transactions: deleted('Transactions of the gateway (with their history and payment proofs)'),
      products: deleted('Products (with their orders)'),
      plans: deleted('Plans'),
      cards: deleted('Stored cards'),
      notifications: deleted('Notifications (with their deliveries and attempts)'),
      emails: deleted('E-mails'),
    },
    { description: 'How many of each were deleted' },
  ),
});

export const testClockRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['test clock'];
  app.get(
    '/test_clock',
    {
      schema: {
        tags,
        summary: "A test shop's clock (live shops: 404)",
        response: { 200: Type.Object({ test_clock: TestClock }), ...errorResponses },
      },
    },
    async (request) => ({ test_clock: await readTestClock(servicesOf(request), shopOf(request).id) }),
  );

  app.post(
    '/test_clock/advance',
    {
      // No transaction held across the billing runs (their charges may leave the process): a keyed
      // advance records its target and a retry after a crash resumes towards it.
      config: { idempotency: 'phased' },
      schema: {
        tags,
        summary:
          "Move a test shop's clock forward, running in order the renewals, retries and ends due on the way",
        body: AdvanceInput,
        response: { 200: AdvanceSummary, ...errorResponses, 409: ErrorBodySchema },
      },
      // After the commit of a request with an Idempotency-Key (route hooks run after the app's).
      onSend: async (request, _reply, payload) => {
        forgetShop(request);
        return payload;
      },
    },
    async (request) => {
      const summary = await advanceTestClock(
        servicesOf(request),
        shopOf(request).id,
        request.body,
        request.keyedRun?.keyed,
      );
      forgetShop(request);
      return summary;
    },
  );

  app.post(
    '/test_clock/reset',
    {
      schema: {
        tags,
        summary:
          "A test shop's clean start: deletes its customers, subscriptions, payments, products, plans, cards, notifications and e-mails, and sets its clock to now (live shops: 403)",
        response: { 200: ResetSummary, ...errorResponses, 403: ErrorBodySchema },
      },
      onSend: async (request, _reply, payload) => {
        forgetShop(request);
        return payload;
      },
    },
    async (request) => {
      const key = request.headers['idempotency-key'];
      const summary = await resetTestShop(
        servicesOf(request),
        shopOf(request).id,
        Array.isArray(key) ? key[0] : key,
      );
      forgetShop(request);
      return summary;
    },
  );
};
