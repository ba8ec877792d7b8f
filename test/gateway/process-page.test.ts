import { beforeAll, describe, expect, it } from 'vitest';
import { returnUrlWithResult } from '../../src/gateway/process-page.js';
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

const open = (g: GatewayShop, uid: string) => g.h.app.inject({ method: 'GET', url: `/process/${uid}` });
const submit = (g: GatewayShop, uid: string, body: string, type = 'application/x-www-form-urlencoded') =>
  g.h.app.inject({
    method: 'POST',
    url: `/process/${uid}`,
    headers: { 'content-type': type },
    payload: body,
  });

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
    expect(res.body).toContain('1234.56 EUR');
    expect(res.body).toContain('Visa •••• 1097');
    expect(res.body).toContain('Corner &lt;Shop&gt; &amp; Co');
    expect(res.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.body).not.toContain('<script>alert(1)');
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

  it('for a frictionless card, shows a form that submits itself, allowed by the page policy', async () => {
    const { g, uid } = await incomplete({}, FRICTIONLESS);
    const res = await open(g, uid);
    expectPage(res, 200);
    expect(res.body).toContain('<form id="continue" method="post">');
    expect(res.body).toMatch(/<script>document\.getElementById\('continue'\)\.submit\(\);<\/script>/);
    expect(res.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/]+=*'/);
    expect((await g.api.get(`/transactions/${uid}`)).body.transaction.status).toBe('incomplete');
  });

  it.each([UNKNOWN_UID, 'not-a-uid', '%3Cscript%3E'])('answers an HTML 404 page for %s', async (uid) => {
    const g = await gatewayShop();
    const res = await open(g, uid);
    expectPage(res, 404);
    expect(res.body).toContain('Payment not found');
    expect(res.body).not.toContain('<script>');
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
    const res = await submit(g, uid, 'outcome=passed');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`https://shop.example/back?order=7&uid=${uid}&status=successful#top`);
    const first = (await g.api.get(`/transactions/${uid}`)).body.transaction;
    expect(first.status).toBe('successful');
    const again = await submit(g, uid, 'outcome=failed');
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
    const g = await gatewayShop();
    const res = await submit(g, UNKNOWN_UID, 'outcome=passed');
    expectPage(res, 404);
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
