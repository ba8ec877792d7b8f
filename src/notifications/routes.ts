import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { page } from '../http/pagination.js';
import { errorResponses, FreeObject, IdParams, Nullable } from '../http/schemas.js';
import { getNotification, listNotifications, resendNotification } from './service.js';

const Str = Type.String();

const AttemptSchema = Type.Object({
  n: Type.Integer({ description: 'Attempt number, from 1' }),
  at: Str,
  status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when none came" })),
  duration_ms: Type.Integer(),
  response: Nullable(Type.String({ description: "The first KiB of the receiver's answer" })),
  error: Nullable(Type.String({ description: 'Why no answer came (timeout, refused, refused address)' })),
});

export const NotificationSchema = Type.Object(
  {
    id: Type.String({ description: 'evt_ and a number; sent as the Kopek-Event-Id header' }),
    event: Type.String({ description: 'e.g. renewed.subscription' }),
    resource_type: Str,
    resource_id: Str,
    url: Str,
    status: Type.String({ enum: ['pending', 'delivered', 'failed'] }),
    attempt_count: Type.Integer(),
    next_attempt_at: Nullable(Str),
    delivered_at: Nullable(Str),
    created_at: Str,
    payload: FreeObject,
    attempts: Type.Optional(Type.Array(AttemptSchema)),
  },
  { $id: 'Notification' },
);

const ListNotificationsQuery = Type.Object({
  limit: Type.Optional(Str),
  starting_after: Type.Optional(Str),
  resource_id: Type.Optional(Type.String({ description: 'e.g. a subscription id' })),
  event: Type.Optional(Type.String({ description: 'e.g. renewed.subscription' })),
  status: Type.Optional(Type.String({ description: 'pending, delivered or failed' })),
});

export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['notifications'];
  app.get(
    '/notifications',
    {
      schema: {
        tags,
        summary: 'List notifications sent (or to be sent) to notification URLs, newest first',
        querystring: ListNotificationsQuery,
        response: { 200: Type.Array(NotificationSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const params = parseListQuery(q);
      const rows = await listNotifications(ctxOf(request), q, params);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );

  app.get(
    '/notifications/:id',
    {
      schema: {
        tags,
        summary: 'Read a notification with every attempt to deliver it',
        params: IdParams,
        response: { 200: NotificationSchema, ...errorResponses },
      },
    },
    async (request) => getNotification(ctxOf(request), request.params.id),
  );

  app.post(
    '/notifications/:id/resend',
    {
      schema: {
        tags,
        summary: 'Send a notification again: a new series of attempts, the first one now',
        params: IdParams,
        response: { 200: NotificationSchema, ...errorResponses },
      },
    },
    async (request) => resendNotification(ctxOf(request), request.params.id),
  );
};
