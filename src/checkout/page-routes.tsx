import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../context.js';
import { creditCardFromForm } from '../pages/card-form.js';
import { checkoutUrl } from '../pages/checkout-url.js';
import { checkFormToken, formToken } from '../pages/form-token.js';
import { type FrameMode, frameModeOf, withFrameMode } from '../pages/frame-mode.js';
import { buyerLang } from '../pages/language-switch.js';
import { hostedProblemPage } from '../pages/problem.js';
import { sendPage } from '../pages/render.js';
import { allowFormTargets, allowFraming, PageProblem, registerPageScope } from '../pages/scope.js';
import { shopById } from '../shops/index.js';
import {
  findSubscription,
  loadSubscriptionCheckout,
  paySubscriptionCheckout,
  type SubscriptionCheckout,
} from '../subscriptions/index.js';
import { CtpFormPage, ctpLang, ctpOpen, ctpResult } from './api/page.js';
import { type CtpCheckout, loadCtpCheckout, payCtpCheckout } from './api/pay.js';
import { answering, waitForFirst } from './first-post.js';
import { formProblems } from './form-errors.js';
import { type FrameInfo, ResultPage } from './pages.js';
import { SubscriptionFormPage, subscriptionLang, subscriptionResult } from './subscription/page.js';

/**
 * `{checkout_url}/v2/checkout?token=…`: the hosted page of a redirect subscription and of the checkout
 * API alike. GET shows the form while the token takes a card, else how it ended (paid, declined,
 * waiting for the bank, expired); POST (the form, with its CSRF token) pays, then sends the browser
 * back to GET (303), or to the bank's 3-D Secure page, which returns here too. Public: the token is
 * the reference. Card data never reaches a log or a page: the form shows number and CVC empty again.
 * `{checkout_url}/widget/hpp.html?token=…` (the checkout API's redirect_url) is the same page.
 *
 * The page and every page it leads to may be framed by the shop's page (docs/embedding.md): by any
 * site, or by the shop's `frame_origins` when it names them. Its form's CSRF token is therefore no
 * cookie (none survives in a cross-site frame) but an HMAC bound to the checkout token (form-token.ts).
 * `iframe=inline|overlay|phone` (or the API's `iframe: true`) lays the page out for the frame and
 * travels with the form, its redirects and the 3-D Secure step.
 */

const TOKEN = /^[0-9A-Za-z]{20,64}$/;

type Loaded = { kind: 'subscription'; sc: SubscriptionCheckout } | { kind: 'ctp'; c: CtpCheckout };

function servicesOf(request: FastifyRequest): Services {
  return { ...request.server.services, log: request.log };
}

async function load(services: Services, token: unknown): Promise<Loaded> {
  if (typeof token !== 'string' || !TOKEN.test(token)) throw new PageProblem(404, 'notFound');
  const sc = await loadSubscriptionCheckout(services, token);
  if (sc) return { kind: 'subscription', sc };
  const c = await loadCtpCheckout(services, token);
  if (c) return { kind: 'ctp', c };
  throw new PageProblem(404, 'notFound');
}

async function shopName(services: Services, shopId: number): Promise<string> {
  return (await shopById(services.db, shopId))?.name ?? '';
}

const selfUrl = (services: Services, token: string, frame?: FrameMode) =>
  withFrameMode(checkoutUrl(services.config.checkoutUrl, token), frame);

/** The form's CSRF token names what it is for: paying this checkout. */
const FORM = 'checkout';

const shopOf = (loaded: Loaded) => (loaded.kind === 'subscription' ? loaded.sc.ctx.shop : loaded.c.ctx.shop);
const tokenOf = (loaded: Loaded) =>
  loaded.kind === 'subscription' ? loaded.sc.checkout.token : loaded.c.row.token;

/**
 * Who may frame the answer (the shop's origins, else any site), and how the page is laid out: the
 * request's `iframe` mode, else inline for a checkout opened with `iframe: true`.
 */
function framing(reply: FastifyReply, loaded: Loaded, asked: unknown): FrameInfo | undefined {
  const origins = shopOf(loaded).frameOrigins;
  allowFraming(reply, origins);
  const mode = frameModeOf(asked) ?? (loaded.kind === 'ctp' && loaded.c.row.iframe ? 'inline' : undefined);
  return mode && { mode, origins };
}

/** Form values to show again after a problem: never the card number or CVC. */
function keptValues(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string' || k === 'card_number' || k === 'card_cvc' || k === '_csrf' || k === 'token')
      continue;
    out[k] = v.slice(0, 255);
  }
  out.holder = out.card_holder ?? '';
  out.expMonth = out.card_exp_month ?? '';
  out.expYear = out.card_exp_year ?? '';
  return out;
}

async function show(request: FastifyRequest, reply: FastifyReply) {
  const services = servicesOf(request);
  const query = request.query as Record<string, unknown>;
  const loaded = await load(services, query.token);
  const frame = framing(reply, loaded, query.iframe);
  const csrf = () => formToken(services.masterKey, FORM, tokenOf(loaded), services.clock.now());
  if (loaded.kind === 'subscription') {
    const { sc } = loaded;
    const lang = buyerLang(request, subscriptionLang(sc.sub));
    if (!sc.open) {
      const result = subscriptionResult(sc, lang, selfUrl(services, sc.checkout.token, frame?.mode));
      return sendPage(reply, sc.expired ? 410 : 200, <ResultPage {...result} frame={frame} />);
    }
    // Paying may send the browser on to the gateway's 3-D Secure page: the form may lead there.
    allowFormTargets(reply, [services.config.gatewayUrl]);
    return sendPage(
      reply,
      200,
      <SubscriptionFormPage
        sc={sc}
        lang={lang}
        csrf={csrf()}
        shopName={await shopName(services, sc.ctx.shop.id)}
        frame={frame}
      />,
    );
  }
  const { c } = loaded;
  const lang = buyerLang(request, ctpLang(c.row));
  if (!ctpOpen(c.row, c.ctx.clock.now())) {
    const result = ctpResult(c, selfUrl(services, c.row.token, frame?.mode), lang, frame);
    const expired = c.row.finished_at === null && c.row.status !== 'incomplete';
    return sendPage(reply, expired ? 410 : 200, <ResultPage {...result} />);
  }
  allowFormTargets(reply, [services.config.gatewayUrl]);
  return sendPage(
    reply,
    200,
    <CtpFormPage
      c={c}
      lang={lang}
      csrf={csrf()}
      shopName={await shopName(services, c.ctx.shop.id)}
      frame={frame}
    />,
  );
}

/** A second post of one form: wait for the first to be answered (first-post.ts), then show what it did. */
const waitForFirstPost = (services: Services, token: string, settled: (l: Loaded) => boolean) =>
  waitForFirst(token, async () => settled(await load(services, token)));

const IN_FLIGHT = new Set(['processing', 'trial_processing']);

async function pay(request: FastifyRequest, reply: FastifyReply) {
  const services = servicesOf(request);
  const body = (request.body ?? {}) as Record<string, unknown>;
  const loaded = await load(services, body.token);
  const token = tokenOf(loaded);
  const frame = framing(reply, loaded, body.iframe);
  // The form's own token, made for this checkout by this server: no cookie (form-token.ts).
  checkFormToken(request, FORM, token, services.clock.now());
  const csrf = () => formToken(services.masterKey, FORM, token, services.clock.now());
  const card = creditCardFromForm(body);
  const back = selfUrl(services, token, frame?.mode);
  const seeResult = () => reply.code(303).header('cache-control', 'no-store').redirect(back, 303);

  if (loaded.kind === 'subscription') {
    const { sc } = loaded;
    const lang = buyerLang(request, subscriptionLang(sc.sub));
    const outcome = await answering(token, () =>
      paySubscriptionCheckout(sc, { card, customer: body, ip: request.ip, frame: frame?.mode }),
    );
    if (outcome.kind === 'invalid') {
      const page = (
        <SubscriptionFormPage
          sc={sc}
          lang={lang}
          csrf={csrf()}
          frame={frame}
          shopName={await shopName(services, sc.ctx.shop.id)}
          problems={formProblems(outcome.errors, lang)}
          values={keptValues(body)}
        />
      );
      return sendPage(reply, 422, page);
    }
    if (outcome.kind === 'done') {
      const sub = outcome.sub;
      if (sub.state === 'redirecting' && sub.last_transaction?.redirect_url) {
        allowFormTargets(reply, [sub.last_transaction.redirect_url]);
        return reply
          .code(303)
          .header('cache-control', 'no-store')
          .redirect(sub.last_transaction.redirect_url, 303);
      }
      if (IN_FLIGHT.has(sub.state)) {
        await waitForFirstPost(
          services,
          token,
          (l) => l.kind !== 'subscription' || !IN_FLIGHT.has(l.sc.sub.state),
        );
        const now = await findSubscription(services.db, sc.ctx.shop.id, sub.id);
        const redirect = now?.state === 'redirecting' ? now.last_transaction?.redirect_url : undefined;
        if (redirect) {
          allowFormTargets(reply, [redirect]);
          return reply.code(303).header('cache-control', 'no-store').redirect(redirect, 303);
        }
      }
    }
    return seeResult();
  }

  const { c } = loaded;
  const formTry = typeof body.try === 'string' && /^\d{1,9}$/.test(body.try) ? Number(body.try) : undefined;
  const outcome = await answering(token, () =>
    payCtpCheckout(c, { card, customer: body, ip: request.ip, formTry, frame: frame?.mode }),
  );
  const lang = buyerLang(request, ctpLang(c.row));
  if (outcome.kind === 'unavailable') throw new PageProblem(503, 'unavailable', lang);
  if (outcome.kind === 'invalid') {
    // The checkout as it is now: a try the gateway refused still counts, and the form names the next.
    const now = (await loadCtpCheckout(services, token)) ?? c;
    const page = (
      <CtpFormPage
        c={now}
        lang={lang}
        csrf={csrf()}
        frame={frame}
        shopName={await shopName(services, c.ctx.shop.id)}
        problems={formProblems(outcome.errors, lang)}
        values={keptValues(body)}
      />
    );
    return sendPage(reply, 422, page);
  }
  if (outcome.kind === 'redirect') {
    allowFormTargets(reply, [outcome.url]);
    return reply.code(303).header('cache-control', 'no-store').redirect(outcome.url, 303);
  }
  if (outcome.kind === 'busy') {
    await waitForFirstPost(services, token, (l) => l.kind !== 'ctp' || l.c.row.paying_until === null);
    const now = await loadCtpCheckout(services, token);
    const redirect = now?.row.gateway_response?.transaction.redirect_url;
    if (now?.row.status === 'incomplete' && typeof redirect === 'string') {
      allowFormTargets(reply, [redirect]);
      return reply.code(303).header('cache-control', 'no-store').redirect(redirect, 303);
    }
  }
  return seeResult();
}

export const checkoutPageRoutes: FastifyPluginAsync = async (app) => {
  await registerPageScope(app, {
    problemPage: hostedProblemPage,
    formLimit: 16_384,
    buyerLanguage: true,
    framedProblems: true,
  });
  const options = { config: { public: true }, schema: { hide: true } };
  app.get('/v2/checkout', options, show);
  // The platform's address of the page (a checkout's redirect_url): the same page.
  app.get('/widget/hpp.html', options, show);
  app.post('/v2/checkout', options, pay);
};
