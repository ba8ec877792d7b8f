import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { ApiError } from '../core/errors.js';
import type { PageLang } from './lang.js';
import { browserLang, chosenLang, rememberChosenLang } from './language-switch.js';
import { sendPage } from './render.js';

/**
 * What every group of pages registers inside its own plugin: a form parser, the security headers,
 * and an error handler that answers people with a page, never with the API's JSON. The API around
 * the pages keeps its JSON-only parsers and its own error bodies.
 */

export type ProblemKind = 'notFound' | 'badRequest' | 'forbidden' | 'expiredForm' | 'tooMany' | 'unavailable';

/** Thrown by page handlers: the status and the page that explains it, in the visitor's language. */
export class PageProblem extends Error {
  constructor(
    readonly status: number,
    readonly kind: ProblemKind,
    /** The language of the record the page is about; the buyer's choice comes first (language-switch.tsx). */
    readonly lang?: PageLang,
  ) {
    super(kind);
  }
}

/** What a page's Content-Security-Policy allows beyond the strict default. */
interface CspState {
  /** Origins a form's answer may redirect to (form-action). */
  formTargets: readonly string[];
  /** Further directives (e.g. frame-src). */
  extra: readonly string[];
  /** Who may frame the page (frame-ancestors): nobody unless the page says. */
  ancestors: string;
}

const STRICT: CspState = { formTargets: [], extra: [], ancestors: "'none'" };
const cspStates = new WeakMap<FastifyReply, CspState>();

function csp(state: CspState): string {
  const origins = new Set<string>();
  for (const target of state.formTargets) {
    try {
      const url = new URL(target);
      if (url.protocol === 'http:' || url.protocol === 'https:') origins.add(url.origin);
    } catch {
      // Not an address: nothing to allow.
    }
  }
  const formAction = ["'self'", ...origins].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `form-action ${formAction}`,
    "base-uri 'none'",
    `frame-ancestors ${state.ancestors}`,
    ...state.extra,
  ].join('; ');
}

function widenCsp(reply: FastifyReply, change: Partial<CspState>): void {
  const state = { ...(cspStates.get(reply) ?? STRICT), ...change };
  cspStates.set(reply, state);
  reply.header('content-security-policy', csp(state));
}

/**
 * A form whose answer redirects to another origin (the shop's return_url, the gateway's 3-D Secure
 * page on another host) must name that origin in form-action: browsers check the redirect too.
 */
export function allowFormTargets(reply: FastifyReply, targets: readonly (string | null | undefined)[]): void {
  widenCsp(reply, { formTargets: targets.filter((t): t is string => typeof t === 'string') });
}

/**
 * A page that shows a document of this origin in a sandboxed frame (an e-mail's HTML, served apart
 * under its own `sandbox` policy) allows frames from this origin, and nothing else more.
 */
export function allowSelfFrames(reply: FastifyReply): void {
  widenCsp(reply, { extra: ["frame-src 'self'"] });
}

/**
 * The payment form and the pages it leads to, embedded in a shop's own page (docs/embedding.md): any
 * http(s) site may frame this answer, or only `origins` when the shop named them. Every other page
 * keeps `frame-ancestors 'none'` and X-Frame-Options DENY (set for every page by registerPageScope).
 */
export function allowFraming(reply: FastifyReply, origins: readonly string[] | null): void {
  reply.removeHeader('x-frame-options');
  const ancestors = origins === null ? 'http: https:' : origins.length > 0 ? origins.join(' ') : "'none'";
  widenCsp(reply, { ancestors });
}

export interface PageScopeOptions {
  /** The largest form body accepted, in bytes. */
  formLimit?: number;
  /**
   * The hosted pages: the buyer may choose the language (`?lang=`, kept in a cookie) and a problem
   * page speaks it, else the record's, else the browser's (language-switch.tsx). The cabinet has its own.
   */
  buyerLanguage?: boolean;
  /** Renders the page for a problem: each group of pages shows problems in its own look. */
  problemPage: (lang: PageLang, kind: ProblemKind) => VNode;
  /**
   * The group's problem pages may be framed by any site (the embedded payment form's: a form that
   * expired or a token not found must show inside the shop's page, not as "refused to connect").
   * They carry no action a click could be stolen for.
   */
  framedProblems?: boolean;
}

export async function registerPageScope(app: FastifyInstance, opts: PageScopeOptions): Promise<void> {
  await app.register(formbody, { bodyLimit: opts.formLimit ?? 16_384 });
  await app.register(helmet, {
    // Set below: a page whose form leaves this origin widens form-action for itself.
    contentSecurityPolicy: false,
    referrerPolicy: { policy: 'no-referrer' },
    frameguard: { action: 'deny' },
    crossOriginEmbedderPolicy: false,
  });
  const strict = csp(STRICT);
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', strict);
  });
  // A language the buyer chose with the switch stays for the pages that follow.
  if (opts.buyerLanguage)
    app.addHook('preHandler', async (request, reply) => {
      rememberChosenLang(request, reply);
    });
  app.setErrorHandler((error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    // A page that already knows who may frame it (the shop's list) keeps that.
    if (opts.framedProblems && (cspStates.get(reply) ?? STRICT).ancestors === STRICT.ancestors)
      allowFraming(reply, null);
    const recordLang = error instanceof PageProblem ? error.lang : undefined;
    // On the hosted pages: the buyer's choice, else the record's language, else the browser's.
    const lang = opts.buyerLanguage
      ? (chosenLang(request) ?? recordLang ?? browserLang(request))
      : (recordLang ?? 'en');
    if (error instanceof PageProblem)
      return sendPage(reply, error.status, opts.problemPage(lang, error.kind));
    const code = (error as FastifyError).code;
    if (code === 'FST_CSRF_INVALID_TOKEN' || code === 'FST_CSRF_MISSING_SECRET')
      return sendPage(reply, 403, opts.problemPage(lang, 'expiredForm'));
    const status = error instanceof ApiError ? error.status : ((error as FastifyError).statusCode ?? 500);
    if (status === 404) return sendPage(reply, 404, opts.problemPage(lang, 'notFound'));
    if (status === 429) return sendPage(reply, 429, opts.problemPage(lang, 'tooMany'));
    // A body the page cannot read (another content type, too large, invalid text): the client's mistake.
    if (status >= 400 && status < 500) return sendPage(reply, status, opts.problemPage(lang, 'badRequest'));
    request.log.error({ err: error }, 'page failed');
    return sendPage(reply, 503, opts.problemPage(lang, 'unavailable'));
  });
}
