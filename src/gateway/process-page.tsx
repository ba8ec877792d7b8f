import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.js';
import { checkFormToken, formToken } from '../pages/form-token.js';
import { frameModeOfUrl } from '../pages/frame-mode.js';
import { type PageLang, pageLang } from '../pages/lang.js';
import { buyerLang } from '../pages/language-switch.js';
import { sendPage } from '../pages/render.js';
import { returnUrlWithResult } from '../pages/return-url.js';
import { allowFormTargets, allowFraming, PageProblem, registerPageScope } from '../pages/scope.js';
import { shopById } from '../shops/index.js';
import { type ThreeDSecureStep, threeDSecureStep, UID } from './three-ds.js';
import { type AfterThreeDs, finishThreeDSecureStep, type ThreeDsRouteOptions } from './three-ds-finish.js';
import {
  ChallengePage,
  FrictionlessPage,
  type PaymentView,
  ResultPage,
  threeDsProblemPage,
} from './three-ds-pages.js';

/**
 * The cardholder's 3-D Secure step, `{gateway}/process/{uid}`: the `redirect_url` of an incomplete
 * transaction. Public (the browser has no shop credentials; the unguessable uid is the reference).
 *
 * - GET never changes anything (link scanners, prefetch and HEAD are harmless): it shows the challenge
 *   with "Pass authentication" / "Fail authentication"; for a frictionless card a form that submits
 *   itself (no choice to make; a Continue button remains when scripts are off); for a transaction that
 *   is no longer waiting, its result.
 * - POST `outcome=passed|failed` (a form with its CSRF token) completes the step once, settles the
 *   subscription whose charge it was, then sends the browser (303) to the return_url (the request's,
 *   else the shop's) with `uid` and `status` added; without one it shows the result. A frictionless
 *   step always completes as passed: the card, not the cardholder, decides. A repeated POST (a double
 *   click) changes nothing and answers as the first did (three-ds-finish.ts, shared with the shop's
 *   server-side return).
 * - A step started from a checkout page in a frame on the shop's page (its return_url carries the
 *   `iframe` mode, docs/embedding.md) may be framed as that page may: by the shop's `frame_origins`,
 *   else by any site. Every other step refuses frames. Its form's CSRF token is no cookie (none
 *   survives in a cross-site frame) but an HMAC bound to the uid (pages/form-token.ts).
 * - People get pages, never the API's JSON: an unknown uid is a 404 page, a bad form a 400 page, a
 *   form without its token a 403 page, and a failure of the store a 503 page.
 */

/** Kept here for the callers that import it from the 3-D Secure page. */
export { returnUrlWithResult };

const OUTCOMES = new Set(['passed', 'failed']);

interface Loaded {
  step: ThreeDSecureStep;
  lang: PageLang;
  view: PaymentView;
  returnUrl: string | null;
  /** Who may frame the step: undefined when nobody may (not started in a frame); null: any site. */
  frameOrigins: readonly string[] | null | undefined;
}

async function load(request: FastifyRequest, uid: string): Promise<Loaded> {
  const services = servicesOf(request);
  const step = UID.test(uid) ? await threeDSecureStep(services, uid) : undefined;
  if (!step) throw new PageProblem(404, 'notFound');
  const shop = await shopById(services.db, step.shopId);
  const frameOrigins = frameModeOfUrl(step.returnUrl) ? (shop?.frameOrigins ?? null) : undefined;
  return {
    step,
    lang: buyerLang(request, pageLang(step.language)),
    view: {
      amount: step.amount,
      currency: step.currency,
      description: step.description,
      card: step.card,
      shopName: shop?.name ?? null,
      test: step.test,
      frame: frameOrigins === undefined ? undefined : { origins: frameOrigins },
    },
    returnUrl: step.returnUrl ?? shop?.returnUrl ?? null,
    frameOrigins,
  };
}

/** The step's pages in a frame when it was started in one (see above). */
function frameIfStartedFramed(reply: FastifyReply, loaded: Loaded): void {
  if (loaded.frameOrigins !== undefined) allowFraming(reply, loaded.frameOrigins);
}

const FORM = 'three-d-secure';

function servicesOf(request: FastifyRequest): Services {
  return { ...request.server.services, log: request.log };
}

const uidOf = (request: FastifyRequest) => (request.params as { uid: string }).uid;

async function show(request: FastifyRequest, reply: FastifyReply) {
  const loaded = await load(request, uidOf(request));
  const { step, lang, view, returnUrl } = loaded;
  frameIfStartedFramed(reply, loaded);
  if (step.status !== 'incomplete') {
    const back = returnUrl && returnUrlWithResult(returnUrl, step.uid, step.status);
    return sendPage(
      reply,
      200,
      <ResultPage
        lang={lang}
        successful={step.status === 'successful'}
        cancelled={step.cancelledByShop}
        p={view}
        back={back}
      />,
    );
  }
  // The form's answer redirects to the shop: browsers check that redirect against this page's form-action.
  allowFormTargets(reply, [returnUrl]);
  const services = servicesOf(request);
  const token = formToken(services.masterKey, FORM, step.uid, services.clock.now());
  const page =
    step.flow === 'frictionless' ? (
      <FrictionlessPage lang={lang} p={view} token={token} />
    ) : (
      <ChallengePage lang={lang} p={view} token={token} />
    );
  return sendPage(reply, 200, page);
}

async function complete(request: FastifyRequest, reply: FastifyReply, after: AfterThreeDs | undefined) {
  const services = servicesOf(request);
  const uid = uidOf(request);
  const loaded = await load(request, uid);
  const { step, lang, view, returnUrl } = loaded;
  frameIfStartedFramed(reply, loaded);
  checkFormToken(request, FORM, step.uid, services.clock.now());
  const outcome = (request.body as Record<string, unknown> | undefined)?.outcome;
  if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) throw new PageProblem(400, 'badRequest', lang);
  const status = await finishThreeDSecureStep(services, step, outcome as 'passed' | 'failed', after);
  const target = returnUrl && returnUrlWithResult(returnUrl, uid, status);
  if (target) {
    allowFormTargets(reply, [target]);
    return reply.code(303).header('cache-control', 'no-store').redirect(target, 303);
  }
  const cancelled = (await threeDSecureStep(services, uid))?.cancelledByShop ?? false;
  return sendPage(
    reply,
    200,
    <ResultPage
      lang={lang}
      successful={status === 'successful'}
      cancelled={cancelled}
      p={view}
      back={null}
    />,
  );
}

/** The page's routes, with their own form parser and error pages: the API around them stays JSON. */
export const processPageRoutes: FastifyPluginAsync<ThreeDsRouteOptions> = async (app, opts) => {
  await registerPageScope(app, { problemPage: threeDsProblemPage, formLimit: 4096, buyerLanguage: true });
  const options = { config: { public: true }, schema: { hide: true } };
  app.get('/process/:uid', options, show);
  app.post('/process/:uid', options, (request, reply) => complete(request, reply, opts.afterThreeDs));
};
