import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Whether a cookie gets `Secure`: when the request came over https (or a proxy in TRUST_PROXY says
 * so), and always when PUBLIC_URL is https. The latter keeps a deployment behind a TLS proxy safe
 * even when TRUST_PROXY is not set, and the proxy's plain-http hop looks like http to Kopek.
 */
export function secureCookie(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.server.httpsPublicUrl;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** PUBLIC_URL is https: every cookie is Secure (secureCookie). */
    httpsPublicUrl: boolean;
  }
}

/**
 * Cookies and CSRF tokens for every form of every page. The token's secret lives in an HttpOnly
 * cookie; each form carries a token derived from it (`_csrf`), which another site can neither read
 * nor forge. Lax, so a buyer arriving from a shop's site still gets a working form.
 */
export async function registerPageSecurity(app: FastifyInstance, publicUrl?: string): Promise<void> {
  const https = publicUrl !== undefined && new URL(publicUrl).protocol === 'https:';
  app.decorate('httpsPublicUrl', https);
  await app.register(cookie);
  await app.register(csrf, {
    cookieKey: 'kopek_csrf',
    // 'auto': Secure when the request came over https (secureCookie above, for the CSRF cookie).
    cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, secure: https || 'auto' },
  });
}

/** The preHandler that refuses a form posted without its token (403, answered as a page). */
export function csrfCheck(app: FastifyInstance) {
  return app.csrfProtection;
}
