import type { FastifyReply } from 'fastify';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/**
 * Renders a page and sends it. Everything the components put in text or attributes is escaped by
 * the renderer; no page builds HTML by concatenation. Pages are never cached: they show payments.
 */
export function sendPage(reply: FastifyReply, status: number, page: VNode): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(`<!doctype html>${renderToString(page)}`);
}

/** The page as text, for tests and e-mail previews. */
export function renderPage(page: VNode): string {
  return `<!doctype html>${renderToString(page)}`;
}
