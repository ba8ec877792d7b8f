import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CsrfField, ErrorSummary, Field } from '../pages/components.js';
import { Document } from '../pages/document.js';
import { fill, type PageLang } from '../pages/lang.js';
import { sendPage } from '../pages/render.js';
import { secureCookie } from '../pages/security.js';
import { cabinetLang, LANG_COOKIE, SESSION_COOKIE, safeNext } from './context.js';
import { endSession, SESSION_MAX_MS, startSession } from './sessions.js';
import { beginSignIn, normalShopId } from './sign-in-limits.js';
import { cabinetTexts } from './texts.js';

/**
 * Signing in with the shop id and secret key, and signing out. Attempts are counted in the limit store (so
 * every instance sees them) per address, per address and shop, and per shop (src/cabinet/sign-in-limits.ts):
 * past a limit the form refuses to check keys for a while. The key comparison itself is
 * constant-time (ShopAuthenticator).
 */

interface SignInView {
  lang: PageLang;
  csrf: string;
  next: string;
  shopId?: string;
  error?: string;
  notice?: string;
}

function SignInPage(v: SignInView) {
  const t = cabinetTexts(v.lang);
  return (
    <Document lang={v.lang} title={t.signInTitle} bodyClass="hosted">
      <main class="card">
        <h1>{t.signInTitle}</h1>
        <p class="muted">{t.signInIntro}</p>
        {v.notice && (
          <p class="notice" role="status">
            {v.notice}
          </p>
        )}
        <ErrorSummary title={t.signInTitle} errors={v.error ? [v.error] : []} />
        <form method="post" action="/cabinet/sign-in">
          <CsrfField token={v.csrf} />
          <input type="hidden" name="next" value={v.next} />
          <Field
            name="shop_id"
            label={t.shopId}
            autocomplete="username"
            inputmode="numeric"
            required
            maxLength={10}
            value={v.shopId}
          />
          <Field
            name="secret_key"
            label={t.secretKey}
            type="password"
            autocomplete="current-password"
            required
          />
          <div class="actions">
            <button type="submit" class="primary">
              {t.signIn}
            </button>
          </div>
        </form>
      </main>
    </Document>
  );
}

function cookieOptions(request: FastifyRequest, maxAgeMs: number) {
  return {
    path: '/cabinet',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: secureCookie(request),
    maxAge: Math.floor(maxAgeMs / 1000),
  };
}

export async function signInRoutes(app: FastifyInstance): Promise<void> {
  const show = (request: FastifyRequest, reply: FastifyReply, status: number, view: Partial<SignInView>) =>
    sendPage(
      reply,
      status,
      <SignInPage
        lang={cabinetLang(request)}
        csrf={reply.generateCsrf()}
        next={safeNext((request.query as Record<string, unknown>)?.next)}
        {...view}
      />,
    );

  app.get('/sign-in', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const t = cabinetTexts(cabinetLang(request));
    const notice = q.signed_out === '1' ? t.signedOut : q.ended === '1' ? t.sessionEnded : undefined;
    return show(request, reply, 200, notice ? { notice } : {});
  });

  app.post('/sign-in', { preHandler: app.csrfProtection }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const lang = cabinetLang(request);
    const t = cabinetTexts(lang);
    const shopId = typeof body.shop_id === 'string' ? body.shop_id.trim() : '';
    const secret = typeof body.secret_key === 'string' ? body.secret_key : '';
    const next = safeNext(body.next);
    if (!shopId || !secret) return show(request, reply, 422, { shopId, next, error: t.signInBlank });

    // A long value is no shop id: it counts against the address only.
    const normal = shopId.length <= 64 ? normalShopId(shopId) : undefined;
    const attempt = await beginSignIn(app.limits, request.ip, normal, app.services.clock.now());
    if (attempt.waitMs > 0) {
      const minutes = Math.max(1, Math.ceil(attempt.waitMs / 60_000));
      reply.header('retry-after', String(Math.ceil(attempt.waitMs / 1000)));
      request.log.info({ shopId: normal }, 'cabinet sign-in turned away: too many attempts');
      return show(request, reply, 429, { shopId, next, error: fill(t.tooMany, { minutes }) });
    }

    const found = (await app.shopAuthenticator.authenticate(shopId, secret))?.shop;
    if (!found) {
      await attempt.failed();
      request.log.info({ shopId: normal }, 'cabinet sign-in refused');
      return show(request, reply, 401, { shopId, next, error: t.signInFailed });
    }
    await attempt.succeeded();
    const session = await startSession(
      app.services.db,
      found.id,
      app.services.clock.now(),
      request.headers['user-agent'],
    );
    request.log.info({ shopId: found.id }, 'cabinet sign-in');
    reply.setCookie(SESSION_COOKIE, session.token, cookieOptions(request, SESSION_MAX_MS));
    return reply.code(303).redirect(next, 303);
  });

  app.post('/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) await endSession(app.services.db, token);
    reply.clearCookie(SESSION_COOKIE, { path: '/cabinet', secure: secureCookie(request) });
    return reply.code(303).redirect('/cabinet/sign-in?signed_out=1', 303);
  });

  // A preference, not a change of anything stored: a plain link switches it.
  app.get('/language', async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const to = q.to === 'ru' ? 'ru' : 'en';
    // HttpOnly as every cookie of Kopek's: no script of the pages reads it.
    reply.setCookie(LANG_COOKIE, to, cookieOptions(request, 365 * 24 * 3600 * 1000));
    return reply.code(303).redirect(safeNext(q.back), 303);
  });
}
