import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.js';
import { ApiError } from '../core/errors.js';
import { findShopRow } from '../shops/repository.js';
import {
  challengePage,
  frictionlessPage,
  PAGE_HEADERS,
  type PageLang,
  type PaymentView,
  type ProblemKind,
  pageLang,
  problemPage,
  resultPage,
} from './process-html.js';
import { type ThreeDSecureStep, threeDSecureStep, UID } from './three-ds.js';
import { finishThreeDSecureStep } from './three-ds-finish.js';

/**
 * The cardholder's 3-D Secure step, `{gateway}/process/{uid}`: the `redirect_url` of an incomplete
 * transaction. Public (the browser has no shop credentials; the unguessable uid is the reference).
 *
 * - GET never changes anything (link scanners, prefetch and HEAD are harmless): it shows the challenge
 *   with "Pass authentication" / "Fail authentication"; for a frictionless card a form that submits
 *   itself (no choice to make; a Continue button remains when scripts are off); for a transaction that
 *   is no longer waiting, its result.
 * - POST `outcome=passed|failed` (a form) completes the step once, settles the subscription whose
 *   charge it was, then sends the browser (303) to the return_url (the request's, else the shop's)
 *   with `uid` and `status` added; without one it shows the result. A frictionless step always
 *   completes as passed: the card, not the cardholder, decides. A repeated POST (a double click)
 *   changes nothing and answers as the first did (three-ds-finish.ts, shared with the shop's
 *   server-side return).
 * - People get pages, never the API's JSON: an unknown uid is a 404 page, a bad form a 400 page, and a
 *   failure of the store a 503 page.
 */

const OUTCOMES = new Set(['passed', 'failed']);

class PageProblem extends Error {
  constructor(
    readonly status: number,
    readonly kind: ProblemKind,
    readonly lang: PageLang = 'en',
  ) {
    super(kind);
  }
}

function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(html);
}

/**
 * The return address with the step's result: `uid` and `status` added (with `&` after an existing
 * query, before any fragment). Only http(s) addresses; the URL's own serialisation keeps the
 * Location header ASCII whatever the shop wrote.
 */
export function returnUrlWithResult(url: string, uid: string, status: string): string | null {
  let href: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
    href = parsed.href;
  } catch {
    return null;
  }
  const hash = href.indexOf('#');
  const base = hash === -1 ? href : href.slice(0, hash);
  const fragment = hash === -1 ? '' : href.slice(hash);
  const joiner = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${joiner}uid=${encodeURIComponent(uid)}&status=${encodeURIComponent(status)}${fragment}`;
}

interface Loaded {
  step: ThreeDSecureStep;
  lang: PageLang;
  view: PaymentView;
  returnUrl: string | null;
}

async function load(services: Services, uid: string): Promise<Loaded> {
  const step = UID.test(uid) ? await threeDSecureStep(services, uid) : undefined;
  if (!step) throw new PageProblem(404, 'notFound');
  const shop = await findShopRow(services.db, step.shopId);
  return {
    step,
    lang: pageLang(step.language),
    view: {
      amount: step.amount,
      currency: step.currency,
      description: step.description,
      card: step.card,
      shopName: shop?.name ?? null,
    },
    returnUrl: step.returnUrl ?? shop?.return_url ?? null,
  };
}

function servicesOf(request: FastifyRequest): Services {
  return { ...request.server.services, log: request.log };
}

const uidOf = (request: FastifyRequest) => (request.params as { uid: string }).uid;

async function show(request: FastifyRequest, reply: FastifyReply) {
  const { step, lang, view, returnUrl } = await load(servicesOf(request), uidOf(request));
  if (step.status !== 'incomplete') {
    const back = returnUrl && returnUrlWithResult(returnUrl, step.uid, step.status);
    return send(reply, 200, resultPage(lang, step.status === 'successful', view, back));
  }
  return send(
    reply,
    200,
    step.flow === 'frictionless' ? frictionlessPage(lang, view) : challengePage(lang, view),
  );
}

async function complete(request: FastifyRequest, reply: FastifyReply) {
  const services = servicesOf(request);
  const uid = uidOf(request);
  const { step, lang, view, returnUrl } = await load(services, uid);
  const outcome = (request.body as Record<string, unknown> | undefined)?.outcome;
  if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) throw new PageProblem(400, 'badRequest', lang);
  const status = await finishThreeDSecureStep(services, step, outcome as 'passed' | 'failed');
  const target = returnUrl && returnUrlWithResult(returnUrl, uid, status);
  if (target) return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
  return send(reply, 200, resultPage(lang, status === 'successful', view, null));
}

function pageForError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof PageProblem) return send(reply, error.status, problemPage(error.lang, error.kind));
  const status = error instanceof ApiError ? error.status : ((error as FastifyError).statusCode ?? 500);
  if (status === 404) return send(reply, 404, problemPage('en', 'notFound'));
  // A body the page cannot read (another content type, too large, invalid text): the client's mistake.
  if (status >= 400 && status < 500) return send(reply, status, problemPage('en', 'badRequest'));
  request.log.error({ err: error }, '3-D Secure page failed');
  return send(reply, 503, problemPage('en', 'unavailable'));
}

/** The page's routes, with their own form parser and error pages: the API around them stays JSON. */
export const processPageRoutes: FastifyPluginAsync = async (app) => {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: 4096 },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  app.setErrorHandler(pageForError);
  const options = { config: { public: true }, schema: { hide: true } };
  app.get('/process/:uid', options, show);
  app.post('/process/:uid', options, complete);
};
