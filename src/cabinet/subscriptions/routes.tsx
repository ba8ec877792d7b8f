import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Ctx } from '../../context.js';
import { shopCtx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import { fill } from '../../pages/lang.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import {
  cancelSubscription,
  getSubscription,
  SUBSCRIPTION_STATES,
  type Subscription,
  type SubscriptionState,
} from '../../subscriptions/index.js';
import { cabinetOf } from '../context.js';
import { CABINET_PAGE_SIZE, cursorOf, pageOf } from '../paging.js';
import { CancelPage } from './cancel-page.js';
import { SubscriptionPage } from './detail-page.js';
import { type ListErrors, type ListQuery, SubscriptionListPage } from './list-page.js';
import { type SubscriptionListFilter, subscriptionPage } from './repository.js';
import { subscriptionTexts } from './texts.js';
import { timelineOf } from './timeline.js';

/**
 * The subscriptions section: the filtered list, a subscription's page with its timeline, and
 * cancelling with a confirmation step. Reads go straight to the store; the subscription itself and
 * the cancel go through the API's own verbs (getSubscription, cancelSubscription).
 */

const MAX_FILTER = 255;
const LIST_KEYS = ['state', 'plan', 'email', 'tracking_id', 'id', 'after'] as const;

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

export function cabinetCtx(request: FastifyRequest): Ctx {
  const services = request.server.services;
  return shopCtx({ ...services, log: request.log }, cabinetOf(request).shop);
}

function readListQuery(raw: Record<string, unknown>, lang: 'en' | 'ru') {
  const t = subscriptionTexts(lang);
  const query = Object.fromEntries(LIST_KEYS.map((k) => [k, text(raw[k])])) as unknown as ListQuery;
  const errors: ListErrors = {};
  for (const k of ['plan', 'email', 'tracking_id', 'id'] as const) {
    if (query[k].length > MAX_FILTER) errors[k] = fill(t.tooLong, { max: MAX_FILTER });
  }
  if (query.state !== '' && !SUBSCRIPTION_STATES.includes(query.state as SubscriptionState)) {
    errors.state = t.badState;
  }
  const filter: SubscriptionListFilter = {};
  if (query.state) filter.state = query.state;
  if (query.plan) filter.plan = query.plan;
  if (query.email) filter.email = query.email;
  if (query.tracking_id) filter.trackingId = query.tracking_id;
  if (query.id) filter.id = query.id;
  return { query, errors, filter };
}

/** The subscription as the API's GET shows it; another shop's (or no) subscription is "not found". */
async function subscriptionOf(request: FastifyRequest, id: string): Promise<Subscription> {
  try {
    return await getSubscription(cabinetCtx(request), id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw new PageProblem(404, 'notFound', cabinetOf(request).lang);
    throw err;
  }
}

const subscriptionHref = (id: string, done?: string) =>
  `/cabinet/subscriptions/${encodeURIComponent(id)}${done ? `?done=${done}` : ''}`;

export const subscriptionRoutes: FastifyPluginAsync = async (app) => {
  app.get('/subscriptions', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const { query, errors, filter } = readListQuery(request.query as Record<string, unknown>, cabinet.lang);
    if (Object.keys(errors).length > 0) {
      return sendPage(
        reply,
        400,
        <SubscriptionListPage view={{ cabinet, query, errors, rows: [], next: undefined }} />,
      );
    }
    const { db } = request.server.services;
    const rows = await subscriptionPage(
      db,
      cabinet.shop.id,
      filter,
      CABINET_PAGE_SIZE,
      cursorOf(query.after),
    );
    const page = pageOf(rows);
    return sendPage(reply, 200, <SubscriptionListPage view={{ cabinet, query, errors, ...page }} />);
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>(
    '/subscriptions/:id',
    async (request, reply) => {
      const cabinet = cabinetOf(request);
      const sub = await subscriptionOf(request, request.params.id);
      const timeline = await timelineOf(request.server.services.db, cabinet.shop.id, sub.id);
      const t = subscriptionTexts(cabinet.lang);
      const done = request.query.done;
      const notice =
        done === 'canceled' ? t.canceledNotice : done === 'already' ? t.alreadyCanceled : undefined;
      return sendPage(reply, 200, <SubscriptionPage view={{ cabinet, sub, timeline, notice }} />);
    },
  );

  app.get<{ Params: { id: string } }>('/subscriptions/:id/cancel', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const sub = await subscriptionOf(request, request.params.id);
    if (sub.cancelled_at) return reply.redirect(subscriptionHref(sub.id, 'already'), 303);
    return sendPage(reply, 200, <CancelPage view={{ cabinet, sub, reason: '' }} />);
  });

  app.post<{ Params: { id: string } }>(
    '/subscriptions/:id/cancel',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const cabinet = cabinetOf(request);
      const t = subscriptionTexts(cabinet.lang);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const reason = text(body.cancel_reason);
      const id = request.params.id;
      if (reason === '' || reason.length > 1024) {
        const sub = await subscriptionOf(request, id);
        if (sub.cancelled_at) return reply.redirect(subscriptionHref(sub.id, 'already'), 303);
        const error = reason === '' ? t.reasonMissing : fill(t.tooLong, { max: 1024 });
        return sendPage(reply, 422, <CancelPage view={{ cabinet, sub, reason, error }} />);
      }
      try {
        const sub = await cancelSubscription(cabinetCtx(request), id, { cancel_reason: reason });
        return reply.redirect(subscriptionHref(sub.id, 'canceled'), 303);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status === 404) throw new PageProblem(404, 'notFound', cabinet.lang);
        // The only other refusal: it had already ended (a second post of the form, say).
        return reply.redirect(subscriptionHref(id, 'already'), 303);
      }
    },
  );
};
