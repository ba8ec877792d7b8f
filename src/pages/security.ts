import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';

/**
 * Cookies and CSRF tokens for every form of every page. The token's secret lives in an HttpOnly
 * cookie; each form carries a token derived from it (`_csrf`), which another site can neither read
 * nor forge. Lax, so a buyer arriving from a shop's site still gets a working form.
 */
export async function registerPageSecurity(app: FastifyInstance): Promise<void> {
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: 'kopek_csrf',
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: 'auto' },
  });
}

/** The preHandler that refuses a form posted without its token (403, answered as a page). */
export function csrfCheck(app: FastifyInstance) {
  return app.csrfProtection;
}
