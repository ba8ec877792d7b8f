import type { FastifyReply } from 'fastify';
import { h, type VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { SwitchQuery, switchQueryOf } from './language-switch.js';

/**
 * Renders a page and sends it. Everything the components put in text or attributes is escaped by
 * the renderer; no page builds HTML by concatenation. Pages are never cached: they show payments.
 * A hosted page's language switch links to the request's own page (language-switch.tsx).
 */
export function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  const withSwitch = h(SwitchQuery.Provider, { value: switchQueryOf(reply) }, page);
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html>${renderToString(withSwitch)}`);
}

/** The page as text, for tests and e-mail previews. */
export function renderPage(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
