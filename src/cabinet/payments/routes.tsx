import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { getTransaction, type TransactionAnswer } from '../../gateway/index.js';
import { childrenOf, findTransaction, historyOf } from '../../ledger/index.js';
import { fill } from '../../pages/lang.js';
import { sendPage } from '../../pages/render.js';
import { PageProblem } from '../../pages/scope.js';
import { type CabinetContext, cabinetOf } from '../context.js';
import { cursorOf, pageOf } from '../paging.js';
import { type ActionForm, ActionPage, decimalsOf, defaultAmount } from './action-page.js';
import { type Action, availableActions, isAction, isNonce, runAction } from './actions.js';
import { PaymentPage } from './detail.js';
import { PaymentsPage, paymentQuery } from './list.js';
import { eventsOf, listPayments } from './repository.js';
import { paymentTexts } from './texts.js';
import { cabinetCtx, parseAmount, queryText } from './view.js';

/** The payments section: /cabinet/payments, a transaction's page, and capture, void and refund. */

type Params = { uid: string; action?: string };

const PAGE = 50;

async function transactionOf(request: FastifyRequest, uid: string): Promise<TransactionAnswer> {
  const cabinet = cabinetOf(request);
  try {
    return await getTransaction(cabinetCtx(request), uid);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new PageProblem(404, 'notFound', cabinet.lang);
    throw err;
  }
}

async function familyOf(request: FastifyRequest, tr: TransactionAnswer) {
  const { db } = request.server.services;
  const children = (await childrenOf(db, tr.uid)).filter((c) => c.shop_id === cabinetOf(request).shop.id);
  return { children, ...availableActions(tr, children) };
}

function actionOf(request: FastifyRequest<{ Params: Params }>): Action {
  const action = request.params.action ?? '';
  if (!isAction(action)) throw new PageProblem(404, 'notFound', cabinetOf(request).lang);
  return action;
}

/** The limit an action's amount has: the authorization, or what is left to refund. */
function limitOf(action: Action, tr: TransactionAnswer, left: number): number {
  return action === 'refund' ? left : tr.amount;
}

function text(v: unknown, max = 255): string {
  return typeof v === 'string' ? v.trim().slice(0, max) : '';
}

function amountError(cabinet: CabinetContext, currency: string): string {
  return fill(paymentTexts(cabinet.lang).amountInvalid, { digits: decimalsOf(currency) });
}

export const paymentsSection: FastifyPluginAsync = async (app) => {
  app.get('/payments', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const query = request.query as Record<string, unknown>;
    const q = paymentQuery(query, cabinet);
    const invalid = Object.keys(q.errors).length > 0;
    const fetched = invalid
      ? []
      : await listPayments(
          request.server.services.db,
          cabinet.shop.id,
          q.filters,
          cursorOf(query.after),
          PAGE,
        );
    const { rows, next } = pageOf(fetched, PAGE);
    return sendPage(reply, 200, <PaymentsPage cabinet={cabinet} q={q} rows={rows} next={next} />);
  });

  app.get<{ Params: Params }>('/payments/:uid', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const { db } = request.server.services;
    const tr = await transactionOf(request, request.params.uid);
    const family = await familyOf(request, tr);
    const parent = tr.parent_uid ? await findTransaction(db, cabinet.shop.id, tr.parent_uid) : undefined;
    const query = request.query as Record<string, unknown>;
    // A declined action's message is read from its transaction, never from the link (which anyone can write).
    const kind = queryText(query.done, 20);
    const declined = family.children.find((c) => c.uid === queryText(query.child, 64));
    const done = kind ? { kind, message: declined?.message ?? undefined } : undefined;
    return sendPage(
      reply,
      200,
      <PaymentPage
        cabinet={cabinet}
        d={{
          transaction: tr,
          parent,
          children: family.children,
          history: await historyOf(db, tr.uid),
          events: await eventsOf(db, cabinet.shop.id, tr.uid),
          actions: family.actions,
          refunded: family.refunded,
          left: family.left,
          done,
        }}
      />,
    );
  });

  // The first step only asks (a GET form); the review shows what will happen, with the form to do it.
  app.get<{ Params: Params }>('/payments/:uid/:action', async (request, reply) => {
    const cabinet = cabinetOf(request);
    const action = actionOf(request);
    const tr = await transactionOf(request, request.params.uid);
    const { actions, left } = await familyOf(request, tr);
    const query = request.query as Record<string, unknown>;
    const limit = limitOf(action, tr, left);
    const f: ActionForm = {
      action,
      transaction: tr,
      limit,
      amount: text(query.amount, 32) || defaultAmount({ limit, transaction: tr }),
      reason: text(query.reason),
      available: actions.includes(action),
    };
    if (action === 'void' || query.review === '1') {
      const minor = action === 'void' ? tr.amount : parseAmount(f.amount, tr.currency);
      if (minor === undefined) {
        f.errors = { amount: amountError(cabinet, tr.currency) };
        return sendPage(reply, 422, <ActionPage cabinet={cabinet} f={f} />);
      }
      if (f.available) f.confirm = { minor, nonce: randomUUID() };
    }
    return sendPage(reply, 200, <ActionPage cabinet={cabinet} f={f} />);
  });

  app.post<{ Params: Params }>(
    '/payments/:uid/:action',
    { preHandler: app.csrfProtection },
    async (request, reply) => {
      const cabinet = cabinetOf(request);
      const action = actionOf(request);
      const tr = await transactionOf(request, request.params.uid);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const back = `/cabinet/payments/${tr.uid}`;
      const amountText = text(body.amount, 32);
      const reason = text(body.reason);
      const again = async (errors: ActionForm['errors']) => {
        const { actions, left } = await familyOf(request, tr);
        const limit = limitOf(action, tr, left);
        const f: ActionForm = {
          action,
          transaction: tr,
          limit,
          amount: amountText || defaultAmount({ limit, transaction: tr }),
          reason,
          errors,
          available: actions.includes(action),
        };
        return sendPage(reply, 422, <ActionPage cabinet={cabinet} f={f} />);
      };
      if (!isNonce(body.nonce)) throw new PageProblem(400, 'badRequest', cabinet.lang);
      const amount = action === 'void' ? undefined : parseAmount(amountText, tr.currency);
      if (action !== 'void' && amount === undefined)
        return again({ amount: amountError(cabinet, tr.currency) });
      try {
        const outcome = await runAction(cabinetCtx(request), action, tr.uid, {
          nonce: body.nonce,
          amount,
          reason,
        });
        if (outcome.repeated) return seeOther(reply, `${back}?done=repeat`);
        const child = outcome.transaction;
        if (child.status === 'successful') return seeOther(reply, `${back}?done=${action}`);
        return seeOther(reply, `${back}?done=failed&child=${child.uid}`);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 422) throw err;
        const amountProblem = (err.errors as { amount?: unknown }).amount;
        return again(Array.isArray(amountProblem) ? { amount: err.message } : { base: err.message });
      }
    },
  );
};

function seeOther(reply: FastifyReply, url: string) {
  return reply.code(303).header('cache-control', 'no-store').redirect(url, 303);
}
