import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError } from '../core/errors.js';
import { parseListQuery } from '../core/paging.js';
import { ctxOf, publicUrlOf } from '../http/ctx.js';
import { page } from '../http/pagination.js';
import { errorResponses, IdParams, Nullable } from '../http/schemas.js';
import type { EmailFilter, EmailStatus } from './repository.js';
import { getEmail, listEmailsOfShop } from './service.js';

const Str = Type.String();
const STATUSES: readonly EmailStatus[] = ['pending', 'sent', 'failed', 'kept'];

export const EmailSchema = Type.Object(
  {
    id: Type.String({ description: 'eml_ followed by a token' }),
    kind: Type.String({
      enum: ['receipt', 'payment_failed', 'canceled', 'transaction'],
      description: 'receipt, payment_failed and canceled go to the customer; transaction to the shop',
    }),
    event_id: Type.String({
      description: 'The event that called for it: evt_ and a number, as notifications',
    }),
    to: Str,
    subject: Str,
    text: Str,
    html: Str,
    language: Type.String({ description: 'The language it is written in: en or ru' }),
    status: Type.String({
      enum: [...STATUSES],
      description: 'kept: stored without being sent, as no SMTP server is configured',
    }),
    attempts: Type.Integer(),
    next_attempt_at: Nullable(Str),
    sent_at: Nullable(Str),
    last_error: Nullable(
      Type.String({ description: "The SMTP server's refusal, or why it was not reached" }),
    ),
    created_at: Str,
  },
  { $id: 'Email' },
);

const ListEmailsQuery = Type.Object({
  limit: Type.Optional(Str),
  starting_after: Type.Optional(Str),
  status: Type.Optional(Type.String({ description: 'pending, sent, failed or kept' })),
  to: Type.Optional(Type.String({ description: 'Recipient address (letter case ignored)' })),
});

function emailFilter(q: { status?: string; to?: string }): EmailFilter {
  const filter: EmailFilter = {};
  if (q.status !== undefined) {
    if (!(STATUSES as readonly string[]).includes(q.status))
      throw ApiError.validation({ status: [`must be one of ${STATUSES.join(', ')}`] });
    filter.status = q.status as EmailStatus;
  }
  if (q.to !== undefined && q.to !== '') filter.to = q.to;
  return filter;
}

export const emailRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const tags = ['emails'];
  app.get(
    '/emails',
    {
      schema: {
        tags,
        summary: "The shop's e-mails to customers and to itself, newest first",
        querystring: ListEmailsQuery,
        response: { 200: Type.Array(EmailSchema), ...errorResponses },
      },
    },
    async (request, reply) => {
      const params = parseListQuery(request.query);
      const filter = emailFilter(request.query);
      const rows = await listEmailsOfShop(ctxOf(request), params, filter);
      return page(reply, publicUrlOf(request), params, rows);
    },
  );

  app.get(
    '/emails/:id',
    {
      schema: {
        tags,
        summary: 'Read an e-mail: its text and HTML, and how its delivery went',
        params: IdParams,
        response: { 200: EmailSchema, ...errorResponses },
      },
    },
    async (request) => getEmail(ctxOf(request), request.params.id),
  );
};
