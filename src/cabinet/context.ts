import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Shop } from '../context.js';
import { type PageLang, pageLang } from '../pages/lang.js';
import { sameOriginPath } from '../pages/redirect-target.js';
import { shopById } from '../shops/index.js';
import { findSession } from './sessions.js';

/** What every cabinet page knows: whose cabinet it is, in which language, and the forms' CSRF token. */
export interface CabinetContext {
  shop: Shop;
  lang: PageLang;
  /** The token each form of the page carries (`<CsrfField token={cabinet.csrf} />`). */
  csrf: string;
  /** The path of this page, so a sign-in can come back to it and the nav can mark it. */
  path: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    cabinet: CabinetContext | undefined;
  }
}

export const SESSION_COOKIE = 'kopek_session';
export const LANG_COOKIE = 'kopek_lang';

/** The cabinet's language: the visitor's choice (a cookie), else the browser's first preference. */
export function cabinetLang(request: FastifyRequest): PageLang {
  const chosen = request.cookies[LANG_COOKIE];
  if (chosen === 'en' || chosen === 'ru') return chosen;
  const first = request.headers['accept-language']?.split(',')[0]?.trim();
  return pageLang(first);
}

/** The signed-in shop's context of a page handler (set by the guard, which every section runs behind). */
export function cabinetOf(request: FastifyRequest): CabinetContext {
  if (!request.cabinet) throw new Error('cabinet page served outside the signed-in area');
  return request.cabinet;
}

/**
 * The place to come back to after signing in (or after switching the language): a cabinet path of
 * this origin, percent-encoded (src/pages/redirect-target.ts), else the overview.
 */
export function safeNext(next: unknown): string {
  return sameOriginPath(next, '/cabinet', '/cabinet');
}

/**
 * Runs before every page of the signed-in area: no live session sends the visitor to sign in,
 * and comes back here afterwards.
 */
export async function requireSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { db, clock } = request.server.services;
  const token = request.cookies[SESSION_COOKIE];
  const session = token ? await findSession(db, token, clock.now()) : undefined;
  const shop = session ? await shopById(db, session.shopId) : undefined;
  if (!session || !shop) {
    const next = request.method === 'GET' ? safeNext(request.url) : '/cabinet';
    const ended = token ? '&ended=1' : '';
    await reply
      .code(303)
      .header('cache-control', 'no-store')
      .redirect(`/cabinet/sign-in?next=${encodeURIComponent(next)}${ended}`, 303);
    return;
  }
  request.cabinet = {
    shop,
    lang: cabinetLang(request),
    csrf: reply.generateCsrf(),
    path: request.url,
  };
}
