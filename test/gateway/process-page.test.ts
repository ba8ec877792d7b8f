import { beforeAll, describe, expect, it } from 'vitest';
import { returnUrlWithResult } from '../../src/gateway/process-page.js';
import { formToken } from '../../src/pages/form-token.js';
import { harness, TEST_PUBLIC_URL } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

/**
 * The 3-D Secure page over HTTP (in-process): what it answers to every kind of request. The
 * cardholder's clicks in a real browser are in process.browser.test.ts.
 */

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const CHALLENGE = '4012000000001097';
const FRICTIONLESS = '4012000000001006';
const UNKNOWN_UID = '00000000-0000-4000-8000-000000000000';

async function incomplete(extra: Record<string, unknown> = {}, number = CHALLENGE) {
  const g = await gatewayShop({ threeDs: true, name: 'Corner <Shop> & Co' });
  const res = await g.pay({ credit_card: card(number), ...extra });
  expect(res.body.transaction.status).toBe('incomplete');
  const uid = res.body.transaction.uid as string;
  expect(res.body.transaction.redirect_url).toBe(`${TEST_PUBLIC_URL}/process/${uid}`);
  return { g, uid };
}

const open = (g: GatewayShop, uid: string, cookie?: string) =>
  g.h.app.inject({ method: 'GET', url: `/process/${uid}`, ...(cookie ? { headers: { cookie } } : {}) });

interface Form {
  /** The form's CSRF token. */
  token: string;
}

/**
 * Opens the page as a browser would, keeping the token its forms carry. No cookie: the step may run
 * in a cross-site frame, where none is kept (pages/form-token.ts).
 */
async function formOf(g: GatewayShop, uid: string): Promise<Form> {
  const res = await open(g, uid);
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
  expect(res.headers['set-cookie'], 'the page sets no cookie').toBeUndefined();
  expect(token, 'the page carries a CSRF token').toBeDefined();
  return { token: token as string };
}

/** POSTs a form body; `form` adds the page's token, as a browser submitting it does. */
const post = (
  g: GatewayShop,
  uid: string,
  body: string,
  form?: Form,
  type = 'application/x-www-form-urlencoded',
) =>
  g.h.app.inject({
    method: 'POST',
    url: `/process/${uid}`,
    headers: { 'content-type': type },
    payload: form ? `_csrf=${encodeURIComponent(form.token)}${body ? `&${body}` : ''}` : body,
  });

/** Opens the page, then submits its form with `body`. */
const submit = async (g: GatewayShop, uid: string, body: string, type?: string) =>
  post(g, uid, body, await formOf(g, uid), type);

function expectPage(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  expect(res.body).toMatch(/^<!doctype html>/);
}

describe('GET /process/{uid}', () => {
  it('shows the challenge: amount, card, shop, both outcomes, everything escaped', async () => {
    const { g, uid } = await incomplete({ description: '<script>alert(1)</script>', amount: 123456 });
    const res = await open(g, uid);
    expectPage(res, 200);
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('€1,234.56');
    expect(res.body).toContain('Visa •••• 1097');
    expect(res.body).toContain('Corner &lt;Shop> &amp; Co');
    expect(res.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).not.toContain('<Shop>');
    expect(res.body).toContain('name="outcome" value="passed"');
    expect(res.body).toContain('>Pass authentication</button>');
    expect(res.body).toContain('>Fail authentication</button>');
    // Showing the page changes nothing.
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('incomplete');
  });

  it('speaks Russian for language ru, and English (lang="en") for languages without a translation', async () => {
    const ru = await incomplete({ language: 'ru' });
    const page = (await open(ru.g, ru.uid)).body;
    expect(page).toContain('<html lang="ru">');
    expect(page).toContain('Пройти проверку');
    expect(page).toContain('Не пройти проверку');
    const de = await incomplete({ language: 'de' });
    const other = (await open(de.g, de.uid)).body;
    expect(other).toContain('<html lang="en">');
    expect(other).toContain('Pass authentication');
  });

  it('for a frictionless card, shows a form that the page script submits; no inline script', async () => {
    const { g, uid } = await incomplete({}, FRICTIONLESS);
    const res = await open(g, uid);
    expectPage(res, 200);
    expect(res.body).toMatch(/<form method="post" data-auto-submit[^>]*>/);
    expect(res.body).toMatch(/<script src="\/assets\/auto-submit\.js\?v=[0-9a-f]+" defer><\/script>/);
    expect(res.body).not.toMatch(/<script>|<style>| on\w+=/);
    expect(res.body).toContain('>Continue</button>');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('sha256-');
    expect(csp).not.toContain('unsafe-inline');
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('incomplete');
  });

  it("lets its forms lead to the shop: form-action names the return_url's origin", async () => {
    const { g, uid } = await incomplete({ return_url: 'https://shop.example:8443/back' });
    const csp = (await open(g, uid)).headers['content-security-policy'] as string;
    expect(csp).toContain("form-action 'self' https://shop.example:8443;");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('says on the page of a test shop that nothing real is charged, and only there', async () => {
    const banner = async (test: boolean) => {
      const g = await gatewayShop({ threeDs: true, test });
      const res = await g.pay({ credit_card: card(CHALLENGE) });
      return (await open(g, res.body.transaction.uid)).body;
    };
    const test = await banner(true);
    expect(test).toContain('<div class="test-banner" role="note">Test mode: no real money is charged</div>');
    expect(await banner(false)).not.toContain('test-banner');
  });

  it.each([UNKNOWN_UID, 'not-a-uid', '%3Cscript%3E'])('answers an HTML 404 page for %s', async (uid) => {
    const g = await gatewayShop();
    const res = await open(g, uid);
    expectPage(res, 404);
    expect(res.body).toContain('Payment not found');
    expect(res.body).not.toContain('<script>');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('answers 404 for a transaction that never had a 3-D Secure step', async () => {
    const g = await gatewayShop();
    const paid = await g.pay();
    expect(paid.body.transaction.status).toBe('successful');
    expectPage(await open(g, paid.body.transaction.uid), 404);
  });
});

describe('POST /process/{uid}', () => {
  it('passes, then redirects to return_url with uid and status; a second submit changes nothing', async () => {
    const { g, uid } = await incomplete({ return_url: 'https://shop.example/back?order=7#top' });
    const form = await formOf(g, uid);
    const res = await post(g, uid, 'outcome=passed', form);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`https://shop.example/back?order=7&uid=${uid}&status=successful#top`);
    const first = (await g.api.get(`/transactions/${uid}`)).body.transaction;
    expect(first.status).toBe('successful');
    // The same page's other button, pressed after the first (its form is still on screen).
    const again = await post(g, uid, 'outcome=failed', form);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(res.headers.location);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction).toEqual(first);
    // The result, once final, is what GET shows, with the way back to the shop.
    const page = await open(g, uid);
    expectPage(page, 200);
    expect(page.body).toContain('Payment successful');
    expect(page.body).toContain(
      `href="https://shop.example/back?order=7&amp;uid=${uid}&amp;status=successful#top"`,
    );
  });

  it('fails when the cardholder fails, and shows the result when there is nowhere to return', async () => {
    const { g, uid } = await incomplete({ language: 'ru' });
    const res = await submit(g, uid, 'outcome=failed');
    expectPage(res, 200);
    expect(res.body).toContain('<html lang="ru">');
    expect(res.body).toContain('Платёж не прошёл');
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('failed');
  });

  it('completes a frictionless step as passed whatever the form says: the card decides', async () => {
    const { g, uid } = await incomplete({}, FRICTIONLESS);
    const res = await submit(g, uid, 'outcome=failed');
    expectPage(res, 200);
    expect(res.body).toContain('Payment successful');
    const failing = await incomplete({}, '4012000000001022');
    const page = await submit(failing.g, failing.uid, 'outcome=passed');
    expect(page.body).toContain('Payment failed');
  });

  it.each([
    ['no outcome', '', 'application/x-www-form-urlencoded', 400],
    ['another outcome', 'outcome=maybe', 'application/x-www-form-urlencoded', 400],
    ['a text body', 'outcome=passed', 'text/plain', 415],
    ['a huge form', `outcome=passed&x=${'a'.repeat(10_000)}`, 'application/x-www-form-urlencoded', 413],
  ])('answers an HTML error page for %s and changes nothing', async (_name, body, type, status) => {
    const { g, uid } = await incomplete();
    const res = await submit(g, uid, body, type);
    expectPage(res, status);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('incomplete');
  });

  it('answers an HTML 404 page for an unknown uid', async () => {
    const { g, uid } = await incomplete();
    const res = await post(g, UNKNOWN_UID, 'outcome=passed', await formOf(g, uid));
    expectPage(res, 404);
    expect(res.body).toContain('Payment not found');
  });

  it.each([
    ['without a token', async () => undefined],
    ['with a forged token', async (f: Form) => ({ ...f, token: `${f.token.slice(0, -4)}AAAA` })],
    [
      "with another payment's token",
      async (_f: Form, g: GatewayShop) => ({
        token: formToken(g.h.masterKey, 'three-d-secure', UNKNOWN_UID, g.h.clock.now()),
      }),
    ],
    [
      'with a token a week old',
      async (_f: Form, g: GatewayShop, uid: string) => ({
        token: formToken(
          g.h.masterKey,
          'three-d-secure',
          uid,
          new Date(g.h.clock.now().getTime() - 8 * 86_400_000),
        ),
      }),
    ],
  ])('refuses a form %s with a 403 page and changes nothing', async (_name, tamper) => {
    const { g, uid } = await incomplete({ return_url: 'https://shop.example/back' });
    const form = await tamper(await formOf(g, uid), g, uid);
    const res = await post(g, uid, 'outcome=failed', form);
    expectPage(res, 403);
    expect(res.body).toContain('This form has expired');
    expect(res.headers.location).toBeUndefined();
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('incomplete');
    // The cardholder, back on the page, can still finish the step.
    const ok = await submit(g, uid, 'outcome=passed');
    expect(ok.statusCode).toBe(303);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('successful');
  });

  it('takes a double click: the same form posted twice answers as the first did', async () => {
    const { g, uid } = await incomplete({ return_url: 'https://shop.example/back' });
    const form = await formOf(g, uid);
    const [a, b] = await Promise.all([
      post(g, uid, 'outcome=passed', form),
      post(g, uid, 'outcome=passed', form),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([303, 303]);
    expect(a.headers.location).toBe(`https://shop.example/back?uid=${uid}&status=successful`);
    expect(b.headers.location).toBe(a.headers.location);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('successful');
  });

  it('leaves the API JSON-only: a form body elsewhere is still a 415 in JSON', async () => {
    const g = await gatewayShop();
    const res = await g.h.app.inject({
      method: 'POST',
      url: '/transactions/payments',
      headers: { authorization: g.shop.auth, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'request=1',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ response: { errors: { base: [expect.any(String)] } } });
  });
});

describe('returnUrlWithResult', () => {
  it.each([
    ['https://s.example/r', 'https://s.example/r?uid=u&status=failed'],
    ['https://s.example/r?', 'https://s.example/r?uid=u&status=failed'],
    ['https://s.example/r?id=sbs_1', 'https://s.example/r?id=sbs_1&uid=u&status=failed'],
    ['https://s.example/r?a=1&#x', 'https://s.example/r?a=1&uid=u&status=failed#x'],
    ['https://s.example/заказ', 'https://s.example/%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7?uid=u&status=failed'],
  ])('%s → %s', (url, expected) => {
    expect(returnUrlWithResult(url, 'u', 'failed')).toBe(expected);
  });

  it('refuses what is not an http(s) address', () => {
    expect(returnUrlWithResult('javascript:alert(1)', 'u', 'failed')).toBeNull();
    expect(returnUrlWithResult('not a url', 'u', 'failed')).toBeNull();
  });
});

describe('a 3-D Secure step started in a frame', () => {
  it('may be framed as the checkout page it came from may; any other step refuses frames', async () => {
    const framed = await incomplete({
      return_url: 'https://checkout.example/v2/checkout?token=t&iframe=inline',
    });
    const page = await open(framed.g, framed.uid);
    expect(page.statusCode).toBe(200);
    expect(page.headers['x-frame-options']).toBeUndefined();
    expect(page.headers['content-security-policy']).toContain('frame-ancestors http: https:');
    // Its form, posted from the frame without any cookie, completes the step and returns to the frame.
    const done = await post(framed.g, framed.uid, 'outcome=passed', await formOf(framed.g, framed.uid));
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(
      `https://checkout.example/v2/checkout?token=t&iframe=inline&uid=${framed.uid}&status=successful`,
    );
    expect(done.headers['x-frame-options']).toBeUndefined();

    const top = await incomplete({ return_url: 'https://shop.example/back' });
    const refused = await open(top.g, top.uid);
    expect(refused.headers['x-frame-options']).toBe('DENY');
    expect(refused.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it("is framed by the shop's allowed origins only, when it names them", async () => {
    const { g, uid } = await incomplete({
      return_url: 'https://checkout.example/v2/checkout?token=t&iframe=overlay',
    });
    expect((await g.api.send('PATCH', '/shop', { frame_origins: ['https://shop.example'] })).status).toBe(
      200,
    );
    const page = await open(g, uid);
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors https:\/\/shop\.example(;|$)/);
  });
});
