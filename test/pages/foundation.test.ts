import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardFields, creditCardFromForm } from '../../src/pages/card-form.js';
import { HostedPage } from '../../src/pages/document.js';
import { defineTexts, fill, pageLang } from '../../src/pages/lang.js';
import { hostedProblemPage } from '../../src/pages/problem.js';
import { renderPage, sendPage } from '../../src/pages/render.js';
import { PageProblem, registerPageScope } from '../../src/pages/scope.js';
import { registerPageSecurity } from '../../src/pages/security.js';
import { harness } from '../harness.js';

/** The plumbing every page stands on: escaping, languages, assets, headers, CSRF and error pages. */

describe('rendering', () => {
  it('escapes whatever a shop or buyer wrote, in text and in attributes', () => {
    const html = renderPage(
      HostedPage({
        lang: 'en',
        title: '<script>alert(1)</script>',
        children: `"><img src=x onerror=alert(1)>`,
      }),
    );
    expect(html.startsWith('<!doctype html><html lang="en">')).toBe(true);
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;script>alert(1)&lt;/script>');
  });

  it('names languages and falls back to English', () => {
    expect(pageLang('ru')).toBe('ru');
    expect(pageLang('ru-RU')).toBe('ru');
    expect(pageLang('de')).toBe('en');
    expect(pageLang(null)).toBe('en');
    const t = defineTexts({ en: { hi: 'Hello, {name}' }, ru: { hi: 'Привет, {name}' } });
    expect(fill(t('ru').hi, { name: 'Анна' })).toBe('Привет, Анна');
  });

  it('gives card inputs the standard autocomplete tokens and never echoes the number', () => {
    const html = renderPage(CardFields({ lang: 'en', values: { holder: 'ANNA' } }));
    for (const token of ['cc-number', 'cc-name', 'cc-exp-month', 'cc-exp-year', 'cc-csc'])
      expect(html).toContain(`autocomplete="${token}"`);
    expect(html).toContain('value="ANNA"');
  });

  it('reads the card of a posted form as the gateway takes it', () => {
    expect(
      creditCardFromForm({
        card_number: '4200 0000-0000 0000',
        card_holder: ' Anna ',
        card_exp_month: '3',
        card_exp_year: '30',
        card_cvc: '123',
      }),
    ).toEqual({
      number: '4200000000000000',
      holder: 'Anna',
      exp_month: '03',
      exp_year: 2030,
      verification_value: '123',
    });
    expect(creditCardFromForm({}).exp_month).toBe('');
  });
});

describe('page scope', () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = Fastify();
    await registerPageSecurity(app);
    await app.register(async (pages) => {
      await registerPageScope(pages, { problemPage: hostedProblemPage });
      pages.get('/form', async (_request, reply) => {
        const token = reply.generateCsrf();
        return sendPage(reply, 200, HostedPage({ lang: 'en', title: 'Form', children: token }));
      });
      pages.post('/form', { preHandler: pages.csrfProtection }, async (request) => request.body);
      pages.get('/gone', async () => {
        throw new PageProblem(404, 'notFound', 'ru');
      });
      pages.get('/broken', async () => {
        throw new Error('boom');
      });
    });
    await app.ready();
  });
  afterAll(() => app.close());

  it('sends strict security headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/form' });
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('refuses a form without its CSRF token and takes it with one', async () => {
    const page = await app.inject({ method: 'GET', url: '/form' });
    const cookie = page.cookies.find((c) => c.name === 'kopek_csrf');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    const token = /<main class="card">([^<]+)<\/main>/.exec(page.body)?.[1] as string;
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `kopek_csrf=${cookie?.value}`,
    };

    const without = await app.inject({ method: 'POST', url: '/form', headers, payload: 'a=1' });
    expect(without.statusCode).toBe(403);
    expect(without.headers['content-type']).toContain('text/html');
    expect(without.body).toContain('This form has expired');

    const forged = await app.inject({ method: 'POST', url: '/form', headers, payload: 'a=1&_csrf=forged' });
    expect(forged.statusCode).toBe(403);

    const withToken = await app.inject({
      method: 'POST',
      url: '/form',
      headers,
      payload: `a=1&_csrf=${encodeURIComponent(token)}`,
    });
    expect(withToken.statusCode).toBe(200);
    expect(withToken.json()).toMatchObject({ a: '1' });
  });

  it('answers problems with pages in the visitor language, never with JSON or a stack', async () => {
    const gone = await app.inject({ method: 'GET', url: '/gone' });
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain('lang="ru"');
    expect(gone.body).toContain('Страница не найдена');
    const broken = await app.inject({ method: 'GET', url: '/broken' });
    expect(broken.statusCode).toBe(503);
    expect(broken.body).not.toContain('boom');
  });
});

describe('assets', () => {
  it('serves the stylesheet and scripts from this origin, versioned for long caching', async () => {
    const h = await harness();
    const css = await h.app.inject({ method: 'GET', url: '/assets/pages.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
    expect(css.headers['cache-control']).toContain('immutable');
    const js = await h.app.inject({ method: 'GET', url: '/assets/card-form.js' });
    expect(js.headers['content-type']).toContain('text/javascript');
    const missing = await h.app.inject({ method: 'GET', url: '/assets/nothing.js' });
    expect(missing.statusCode).toBe(404);
  });
});
