import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { shopCtx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import {
  getNotificationAsSent,
  listNotifications,
  type NotificationView,
  resendNotification,
} from '../../notifications/index.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { findShopRow } from '../../shops/index.js';
import { cabinetOf } from '../context.js';
import { CABINET_PAGE_SIZE, cursorOf, pageOf } from '../paging.js';
import { indexWalking, queryText } from '../query.js';
import { signedHeaders } from './headers.js';
import { type ListQuery, NotificationListPage, NotificationPage } from './pages.js';
import { notificationTexts } from './texts.js';

/**
 * The notifications section: the shop's webhook deliveries, newest first, filtered by status, event
 * and resource; one notification with its payload, headers and attempts; and re-sending it through
 * the verb of `POST /notifications/{id}/resend`.
 */

function ctxFor(request: FastifyRequest) {
  const services = request.server.services;
  return shopCtx({ ...services, log: request.log }, cabinetOf(request).shop);
}

/** The context the list reads through: its statements walk their indexes (query.ts, indexWalking). */
function listCtxFor(request: FastifyRequest) {
  const ctx = ctxFor(request);
  return { ...ctx, db: indexWalking(ctx.db) };
}

/** The verb's 404 (unknown, malformed or another shop's id) as the cabinet's not-found page. */
async function orNotFound<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.status === 404)
      throw new PageProblem(404, 'notFound', cabinetOf(request).lang);
    throw err;
  }
}

export const notificationsSection: FastifyPluginAsync = async (app) => {
  app.get('/notifications', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const q = request.query;
    const query: ListQuery = {
      status: queryText(q, 'status'),
      event: queryText(q, 'event'),
      resource_id: queryText(q, 'resource_id'),
      after: queryText(q, 'after') || undefined,
    };
    const ctx = listCtxFor(request);
    const now = ctx.clock.now();
    const after = cursorOf(query.after);
    let rows: NotificationView[];
    try {
      // The API's verb: newest first, limit + 1 rows, the cursor an event older than the page.
      rows = await listNotifications(
        ctx,
        {
          status: query.status || undefined,
          event: query.event || undefined,
          resource_id: query.resource_id || undefined,
        },
        { limit: CABINET_PAGE_SIZE, startingAfter: after === undefined ? undefined : `evt_${after}` },
      );
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      const t = notificationTexts(cabinet.lang);
      const statusError = 'status' in err.errors ? t.badStatus : undefined;
      return sendPage(
        reply,
        422,
        <NotificationListPage
          cabinet={cabinet}
          query={query}
          rows={[]}
          next={undefined}
          statusError={statusError}
          now={now}
        />,
      );
    }
    const page = pageOf(rows.map((n) => ({ n, seq: Number(n.id.slice(4)) })));
    const list = page.rows.map((r) => r.n);
    return sendPage(
      reply,
      200,
      <NotificationListPage cabinet={cabinet} query={query} rows={list} next={page.next} now={now} />,
    );
  });

  app.get<{ Params: { id: string } }>('/notifications/:id', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const ctx = ctxFor(request);
    const sent = await orNotFound(request, () => getNotificationAsSent(ctx, request.params.id));
    const n = sent.view;
    const row = await findShopRow(ctx.db, cabinet.shop.id);
    const last = n.attempts?.[n.attempts.length - 1]?.at;
    const hidden = notificationTexts(cabinet.lang).hidden;
    const headers = row
      ? signedHeaders(ctx.masterKey, row, n, { at: last, kopekSignature: sent.lastKopekSignature }, hidden)
      : [];
    const done = queryText(request.query, 'done') || undefined;
    return sendPage(
      reply,
      200,
      <NotificationPage cabinet={cabinet} n={n} headers={headers} done={done} now={ctx.clock.now()} />,
    );
  });

  app.post<{ Params: { id: string } }>(
    '/notifications/:id/resend',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const ctx = ctxFor(request);
      const n = await orNotFound(request, () => resendNotification(ctx, request.params.id));
      return reply.redirect(`/cabinet/notifications/${n.id}?done=resent`, 303);
    },
  );
};
