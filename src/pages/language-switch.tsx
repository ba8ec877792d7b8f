import type { FastifyReply, FastifyRequest } from 'fastify';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { frameModeOf } from './frame-mode.js';
import { PAGE_LANGS, type PageLang, pageLang } from './lang.js';
import { secureCookie } from './security.js';
import { LANGUAGE_NAMES, pageTexts } from './texts.js';

/**
 * The buyer's own choice of language on the hosted pages. A page speaks the language of what is
 * paid (the product's, the subscription's, the checkout's `language`); the buyer may choose another
 * with the switch every hosted page carries: a plain link to the same page with `lang=en|ru` added.
 * The choice is kept in a cookie (`kopek_page_lang`), so the pages that follow in the same payment
 * (the result, the 3-D Secure step) stay in it. A page about no record (an unknown link) speaks the
 * browser's first language.
 */

export const PAGE_LANG_COOKIE = 'kopek_page_lang';

const isLang = (v: unknown): v is PageLang =>
  typeof v === 'string' && (PAGE_LANGS as readonly string[]).includes(v);

/** The language the buyer chose: `?lang=` on this request, else the cookie of an earlier choice. */
export function chosenLang(request: FastifyRequest): PageLang | undefined {
  const asked = (request.query as Record<string, unknown> | undefined)?.lang;
  if (isLang(asked)) return asked;
  const kept = request.cookies?.[PAGE_LANG_COOKIE];
  return isLang(kept) ? kept : undefined;
}

/** The browser's first language (Accept-Language), English when it is none the pages speak. */
export function browserLang(request: FastifyRequest): PageLang {
  return pageLang(
    String(request.headers['accept-language'] ?? '')
      .split(',')[0]
      ?.trim(),
  );
}

/**
 * A page's language: the buyer's choice, else the language of the record the page shows (its
 * `language` field; null or unknown is English), else, for a page about no record, the browser's.
 */
export function buyerLang(request: FastifyRequest, recordLang?: PageLang): PageLang {
  return chosenLang(request) ?? recordLang ?? browserLang(request);
}

/** Keeps a choice made by `?lang=` for the pages that follow (a preference, not a change of anything stored). */
export function rememberChosenLang(request: FastifyRequest, reply: FastifyReply): void {
  const asked = (request.query as Record<string, unknown> | undefined)?.lang;
  if (!isLang(asked) || request.cookies?.[PAGE_LANG_COOKIE] === asked) return;
  reply.setCookie(PAGE_LANG_COOKIE, asked, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookie(request),
    maxAge: 365 * 24 * 3600,
  });
}

/** The query of the page the switch links to (the page itself, in the other language). */
export const SwitchQuery = createContext<string | null>(null);

/**
 * The switch's query for a reply: the page's own query without `lang`. A page answering a form
 * (a form shown again with its mistakes, a problem page) links to the form's address, keeping the
 * form's `token` (the checkout page's reference).
 */
export function switchQueryOf(reply: FastifyReply): string {
  const request = reply.request;
  const params =
    request.method === 'GET' || request.method === 'HEAD'
      ? new URLSearchParams(request.url.split('?')[1] ?? '')
      : new URLSearchParams();
  const token = (request.body as Record<string, unknown> | undefined)?.token;
  if (request.method === 'POST' && typeof token === 'string' && /^[0-9A-Za-z]{1,64}$/.test(token))
    params.set('token', token);
  // A page in a frame on the shop's page stays laid out for it in the other language too.
  const frame = frameModeOf((request.body as Record<string, unknown> | undefined)?.iframe);
  if (request.method === 'POST' && frame) params.set('iframe', frame);
  params.delete('lang');
  return params.toString();
}

/**
 * The link to this page in the other language, marked with that language (so a screen reader says
 * "English" in English). A relative link: it stays on the page's own address, whatever prefix a
 * proxy put before it.
 */
export function LanguageSwitch({ lang }: { lang: PageLang }) {
  const query = useContext(SwitchQuery);
  if (query === null) return null;
  const other: PageLang = lang === 'ru' ? 'en' : 'ru';
  const params = new URLSearchParams(query);
  params.set('lang', other);
  return (
    <nav class="lang-switch" aria-label={pageTexts(lang).language}>
      <a href={`?${params.toString()}`} lang={other} hreflang={other}>
        {LANGUAGE_NAMES[other]}
      </a>
    </nav>
  );
}
