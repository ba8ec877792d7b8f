import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { shopCtx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import { isId } from '../../ids.js';
import { type EmailStatus, findEmail, getEmail } from '../../mail/index.js';
import { sendPage } from '../../pages/render.js';
import { allowSelfFrames, PageProblem } from '../../pages/scope.js';
import { cabinetOf } from '../context.js';
import { CABINET_PAGE_SIZE, cursorOf, pageOf } from '../paging.js';
import { queryText } from '../query.js';
import { EmailListPage, EmailPage, type EmailQuery } from './pages.js';
import { listEmailPage } from './repository.js';
import { EMAIL_KINDS, EMAIL_STATUSES, emailTexts } from './texts.js';

/**
 * The e-mails section: the shop's e-mails newest first, filtered by status, kind and recipient; one
 * e-mail with its text, and its HTML shown in a sandboxed frame served by a route of its own under a
 * `sandbox` policy, so nothing of it ever runs or becomes part of the cabinet's page.
 */

/** The e-mail's HTML alone: no scripts, no requests, nothing but its own inline styles. */
const EMAIL_HTML_CSP =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'";

const ctxFor = (request: FastifyRequest) =>
  shopCtx({ ...request.server.services, log: request.log }, cabinetOf(request).shop);

export const emailsSection: FastifyPluginAsync = async (app) => {
  app.get('/emails', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const t = emailTexts(cabinet.lang);
    const q = request.query;
    const query: EmailQuery = {
      status: queryText(q, 'status'),
      kind: queryText(q, 'kind'),
      to: queryText(q, 'to', 254),
      after: queryText(q, 'after') || undefined,
    };
    const errors = {
      status:
        query.status === '' || (EMAIL_STATUSES as readonly string[]).includes(query.status)
          ? undefined
          : t.badFilter,
      kind:
        query.kind === '' || (EMAIL_KINDS as readonly string[]).includes(query.kind)
          ? undefined
          : t.badFilter,
    };
    const now = ctxFor(request).clock.now();
    if (errors.status || errors.kind) {
      return sendPage(
        reply,
        422,
        <EmailListPage
          cabinet={cabinet}
          query={query}
          rows={[]}
          next={undefined}
          errors={errors}
          now={now}
        />,
      );
    }
    const rows = await listEmailPage(
      request.server.services.db,
      cabinet.shop.id,
      {
        status: (query.status || undefined) as EmailStatus | undefined,
        kind: query.kind || undefined,
        to: query.to || undefined,
      },
      CABINET_PAGE_SIZE,
      cursorOf(query.after),
    );
    const page = pageOf(rows);
    return sendPage(
      reply,
      200,
      <EmailListPage
        cabinet={cabinet}
        query={query}
        rows={page.rows}
        next={page.next}
        errors={{}}
        now={now}
      />,
    );
  });

  app.get<{ Params: { id: string } }>('/emails/:id', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const ctx = ctxFor(request);
    let email: Awaited<ReturnType<typeof getEmail>>;
    try {
      email = await getEmail(ctx, request.params.id);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) throw new PageProblem(404, 'notFound', cabinet.lang);
      throw err;
    }
    allowSelfFrames(reply);
    return sendPage(reply, 200, <EmailPage cabinet={cabinet} email={email} now={ctx.clock.now()} />);
  });

  app.get<{ Params: { id: string } }>('/emails/:id/html', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const id = request.params.id;
    const row = isId('eml', id)
      ? await findEmail(request.server.services.db, cabinet.shop.id, id)
      : undefined;
    if (!row) throw new PageProblem(404, 'notFound', cabinet.lang);
    return reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', EMAIL_HTML_CSP)
      .header('x-frame-options', 'SAMEORIGIN')
      .send(row.html);
  });
};
