import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ErrorCollector } from '../core/errors.js';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { page } from '../http/pagination.js';
import { errorResponses, FreeObject, IdParams, Nullable } from '../http/schemas.js';
import { PlanSchema } from '../plans/index.js';
import { CancelInput, SubscriptionInputSchema } from './input.js';
import { getSubscription, listSubscriptionsOfShop } from './read.js';
import { SUBSCRIPTION_STATES } from './repository.js';
import { cancelSubscription, createSubscription } from './service.js';

const Str = Type.String();
const CardSchema = Type.Object(
  {
    holder: Type.Optional(Str),
    stamp: Type.Optional(Str),
    brand: Type.Optional(Str),
    last_4: Type.Optional(Str),
    first_1: Type.Optional(Str),
    bin: Type.Optional(Str),
    issuer_country: Type.Optional(Nullable(Str)),
    issuer_name: Type.Optional(Nullable(Str)),
    product: Type.Optional(Nullable(Str)),
    token: Type.Optional(Str),
    token_provider: Type.Optional(Nullable(Str)),
    exp_month: Type.Optional(Type.Integer()),
    exp_year: Type.Optional(Type.Integer()),
  },
  { description: 'Empty object before the card is entered' },
);
const CustomerOut = Type.Partial(
  Type.Object({
    id: Str,
    first_name: Nullable(Str),
    last_name: Nullable(Str),
    address: Nullable(Str),
    city: Nullable(Str),
    country: Nullable(Str),
    zip: Nullable(Str),
    state: Nullable(Str),
    phone: Nullable(Str),
    email: Str,
    ip: Str,
  }),
  { description: 'Empty object, or the customer with its id (only the id should its row be missing)' },
);
// Only `id` is required: a plan whose row is missing from the store (damage: plans are never deleted)
// is answered by its id rather than failing the read. Optional members cost serialising nothing.
const SubscriptionPlan = Type.Object(
  { ...Type.Partial(PlanSchema).properties, id: Str },
  { description: 'The plan; only its id should its row be missing from the store' },
);
const TransactionSummarySchema = Type.Object({
  uid: Str,
  status: Str,
  message: Nullable(Str),
  created_at: Str,
  redirect_url: Type.Optional(Str),
});

export const SubscriptionSchema = Type.Object(
  {
    id: Str,
    state: Type.String({ enum: [...SUBSCRIPTION_STATES] }),
    tracking_id: Nullable(Str),
    device_id: Nullable(Str),
    created_at: Str,
    updated_at: Str,
    renew_at: Nullable(Str),
    active_to: Nullable(Str),
    card: CardSchema,
    customer: CustomerOut,
    paid_billing_cycles: Type.Integer(),
    number_failed_payment_attempts: Type.Integer(),
    additional_data: FreeObject,
    plan: SubscriptionPlan,
    last_transaction: Nullable(TransactionSummarySchema),
    return_url: Nullable(Str),
    notification_url: Nullable(Str),
    receipt_text: Nullable(Type.Array(Str)),
    avs_cvc_verification: Nullable(FreeObject),
    settings: Nullable(FreeObject),
    language: Str,
    dynamic_billing_descriptor: Nullable(Str),
    redirect_url: Type.Optional(Str),
    token: Type.Optional(Str),
    cancel_reason: Type.Optional(Nullable(Str)),
    cancelled_at: Type.Optional(Str),
    transaction: Type.Optional(Nullable(TransactionSummarySchema)),
  },
  { $id: 'Subscription' },
);

const ListSubscriptionsQuery = Type.Object({
  limit: Type.Optional(Str),
  starting_after: Type.Optional(Str),
  tracking_id: Type.Optional(Str),
  state: Type.Optional(Str),
  customer_id: Type.Optional(Str),
  plan_id: Type.Optional(Str),
});

export const subscriptionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['subscriptions'];
  app.post(
    '/subscriptions',
    {
      // A keyed create holds no transaction across the gateway call: it records recovery points
      // and a retry after a crash resumes (service.ts: resumeKeyed).
      config: { idempotency: 'phased', rebuildsFinished: true },
      schema: {
        tags,
        summary: 'Create a subscription (redirect variant without a card, card variant with one)',
        body: SubscriptionInputSchema,
        response: { 201: SubscriptionSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const sub = await createSubscription(ctxOf(request), request.body as Record<string, unknown>);
      return reply.code(201).send(sub);
    },
  );

  app.get(
    '/subscriptions/:id',
    {
      schema: {
        tags,
        summary: 'Read a subscription',
        params: IdParams,
        response: { 200: SubscriptionSchema, ...errorResponses },
      },
    },
    async (request) => getSubscription(ctxOf(request), request.params.id),
  );

  app.get(
    '/subscriptions',
    {
      schema: {
        tags,
        summary: 'List subscriptions: newest first, or first match first when filtered by tracking_id',
        querystring: ListSubscriptionsQuery,
        response: { 200: Type.Array(SubscriptionSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const params = parseListQuery(q);
      if (q.state !== undefined && !(SUBSCRIPTION_STATES as readonly string[]).includes(q.state)) {
        const errors = new ErrorCollector();
        errors.add('state', 'is not included in the list');
        errors.throwIfAny();
      }
      const filter = {
        trackingId: q.tracking_id,
        state: q.state,
        customerId: q.customer_id,
        planId: q.plan_id,
      };
      const rows = await listSubscriptionsOfShop(ctxOf(request), filter, params.limit, params.startingAfter);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );

  app.post(
    '/subscriptions/:id/cancel',
    {
      // A keyed cancel holds no transaction across the gateway calls that settle and end its open
      // charge: its commit records the key's point, and a retry answers the subscription as it is.
      config: { idempotency: 'phased', rebuildsFinished: true },
      schema: {
        tags,
        summary: 'Cancel a subscription',
        params: IdParams,
        body: CancelInput,
        response: { 200: SubscriptionSchema, ...errorResponses },
      },
    },
    async (request) =>
      cancelSubscription(ctxOf(request), request.params.id, request.body as Record<string, unknown>),
  );
};
