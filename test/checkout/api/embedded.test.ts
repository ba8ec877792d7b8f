import { describe, expect, it } from 'vitest';
import { formToken } from '../../../src/pages/form-token.js';
import { client, harness, newShop, withClock } from '../../harness.js';
import { goodCard, openPage, postForm } from '../forms.js';

/**
 * The payment form embedded in the shop's page (docs/embedding.md), in process: who may frame which
 * page, the form's CSRF token without cookies, and the `iframe` mode kept through the form, its
 * redirects and 3-D Secure. The browser's side is in test/browser/embedding.browser.test.ts.
 */

const body = (extra: Record<string, unknown> = {}) => ({
  checkout: {
    transaction_type: 'payment',
    attempts: 3,
    order: { amount: 500, currency: 'EUR', description: 'T-shirt' },
    settings: {
      success_url: 'https://shop.example/ok',
      decline_url: 'https://shop.example/declined',
      fail_url: 'https://shop.example/fail',
      cancel_url: 'https://shop.example/cart',
    },
    ...extra,
  },
});

async function setup(shopInput: Parameters<typeof newShop>[1] = {}) {
  const h = await harness();
  const shop = await newShop(h, shopInput);
  const api = client(h, shop);
  const open = async (extra: Record<string, unknown> = {}) =>
    (await api.post('/ctp/api/checkouts', body(extra))).body.checkout.token as string;
  return { h, shop, api, open };
}

const get = (h: Awaited<ReturnType<typeof harness>>, url: string) => h.app.inject({ method: 'GET', url });

describe('the checkout page in a frame', () => {
  it('may be framed by any site, sets no cookie, and its form pays without one', async () => {
    const { h, api, open } = await setup();
    const token = await open();
    for (const url of [`/widget/hpp.html?token=${token}&iframe=inline`, `/v2/checkout?token=${token}`]) {
      const page = await get(h, url);
      expect(page.statusCode).toBe(200);
      expect(page.headers['x-frame-options']).toBeUndefined();
      expect(page.headers['content-security-policy']).toContain('frame-ancestors http: https:');
      expect(page.headers['set-cookie']).toBeUndefined();
    }
    const page = await openPage(h, token);
    expect(page.cookie).toBe('');
    const paid = await postForm(h, page, token, goodCard());
    expect(paid.status).toBe(303);
    expect((await api.get(`/ctp/api/checkouts/${token}`)).body.checkout.status).toBe('successful');
  });

  it("is framed only by the shop's origins when it names them", async () => {
    const { h, api, open } = await setup();
    await api.send('PATCH', '/shop', { frame_origins: ['https://shop.example', 'http://127.0.0.2:4000'] });
    const page = await get(h, `/widget/hpp.html?token=${await open()}&iframe=inline`);
    expect(page.headers['content-security-policy']).toMatch(
      /frame-ancestors https:\/\/shop\.example http:\/\/127\.0\.0\.2:4000(;|$)/,
    );
    expect(page.body).toContain('data-frame-origins="https://shop.example http://127.0.0.2:4000"');
  });

  it("refuses a form whose token is missing, forged, another checkout's or too old, and pays nothing", async () => {
    const { h, api, open } = await setup();
    const token = await open();
    const other = await open();
    const page = await openPage(h, token);
    const week = 8 * 24 * 60 * 60 * 1000;
    for (const csrf of [
      '',
      `${page.csrf.slice(0, -4)}AAAA`,
      formToken(h.masterKey, 'checkout', other, h.clock.now()),
      formToken(h.masterKey, 'three-d-secure', token, h.clock.now()),
      formToken(h.masterKey, 'checkout', token, new Date(h.clock.now().getTime() - week)),
    ]) {
      const posted = await postForm(h, { ...page, csrf }, token, goodCard());
      expect(posted.status, csrf).toBe(403);
      expect(posted.html).toContain('This form has expired');
      // Even the refusal shows in the frame.
      expect(posted.html).toBeTruthy();
    }
    expect((await api.get(`/ctp/api/checkouts/${token}`)).body.checkout.status).toBeNull();
    expect((await postForm(h, page, token, goodCard())).status).toBe(303);
  });

  it('keeps the iframe mode through the form and its redirect, and tells the shop window the end', async () => {
    const { h, open } = await setup();
    const token = await open();
    const page = await openPage(h, token, '&iframe=overlay');
    expect(page.html).toContain('<input type="hidden" name="iframe" value="overlay"/>');
    expect(page.html).toContain('class="hosted framed"');
    expect(page.html).toMatch(/<script src="\/assets\/frame\.js\?v=[0-9a-f]+" defer>/);
    expect(page.html).toMatch(/href="https:\/\/shop\.example\/cart" target="_top"/);
    const paid = await postForm(h, page, token, { ...goodCard(), iframe: 'overlay' });
    expect(paid.status).toBe(303);
    expect(paid.location).toBe(`http://checkout.kopek.test/v2/checkout?token=${token}&iframe=overlay`);
    const result = await openPage(h, token, '&iframe=overlay');
    expect(result.html).toContain('data-frame-status="successful"');
    expect(result.html).toMatch(
      /data-frame-url="https:\/\/shop\.example\/ok\?token=[^"]+&amp;status=successful&amp;uid=/,
    );
    expect(result.html).toMatch(/href="https:\/\/shop\.example\/ok\?[^"]*" target="_top"/);
  });

  it('a form with mistakes shows again laid out for the frame, its language switch too', async () => {
    const { h, open } = await setup();
    const token = await open();
    const page = await openPage(h, token, '&iframe=inline');
    const wrong = await postForm(h, page, token, { ...goodCard(), card_number: '1234', iframe: 'inline' });
    expect(wrong.status).toBe(422);
    expect(wrong.html).toContain('class="hosted framed"');
    expect(wrong.html).toContain('name="iframe" value="inline"');
    expect(wrong.html).toMatch(/href="\?token=[^"]*&amp;iframe=inline&amp;lang=ru"/);
  });

  it('a decline with tries left tells the shop window, which stays on the form', async () => {
    const { h, open } = await setup();
    const token = await open();
    const page = await openPage(h, token, '&iframe=inline');
    await postForm(h, page, token, { ...goodCard('4005550000000019'), iframe: 'inline' });
    const again = await openPage(h, token, '&iframe=inline');
    expect(again.html).toContain('data-frame-status="failed"');
    expect(again.html).not.toContain('data-frame-url');
    expect(again.html).toContain('name="card_number"');
  });

  it('a checkout opened with iframe: true is laid out for a frame whatever its address', async () => {
    const { h, open } = await setup();
    const token = await open({ iframe: true });
    const page = await openPage(h, token);
    expect(page.html).toContain('class="hosted framed"');
    expect(page.html).toContain('name="iframe" value="inline"');
    const plain = await openPage(h, await open());
    expect(plain.html).not.toContain('framed');
  });

  it('3-D Secure started in a frame returns to the page in the frame, and may be framed itself', async () => {
    const { h, open } = await setup({ threeDs: true });
    const token = await open();
    const page = await openPage(h, token, '&iframe=inline');
    const posted = await postForm(h, page, token, { ...goodCard('4012000000001097'), iframe: 'inline' });
    expect(posted.status).toBe(303);
    const step = await get(h, new URL(posted.location as string).pathname);
    expect(step.statusCode).toBe(200);
    expect(step.headers['x-frame-options']).toBeUndefined();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(step.body)?.[1] as string;
    const done = await h.app.inject({
      method: 'POST',
      url: new URL(posted.location as string).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(csrf)}&outcome=passed`,
    });
    expect(done.statusCode).toBe(303);
    const back = new URL(done.headers.location as string);
    expect(back.searchParams.get('iframe')).toBe('inline');
    const result = await get(h, `${back.pathname}${back.search}`);
    expect(result.headers['x-frame-options']).toBeUndefined();
    expect(result.body).toContain('data-frame-status="successful"');
  });

  it('an expired checkout in a frame sends the shop window to the fail URL', async () => {
    const { h, open } = await setup();
    const token = await open({
      order: {
        amount: 500,
        currency: 'EUR',
        description: 'T',
        expired_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
      },
    });
    await withClock(h, 120_000, async () => {
      const page = await openPage(h, token, '&iframe=inline');
      expect(page.status).toBe(410);
      expect(page.html).toContain('data-frame-status="error"');
      expect(page.html).toContain(
        `data-frame-url="https://shop.example/fail?token=${token}&amp;status=error"`,
      );
    });
  });

  it('a token not found shows its page in the frame too; every other page refuses frames', async () => {
    const { h } = await setup();
    const missing = await get(h, '/widget/hpp.html?token=00000000000000000000000000&iframe=inline');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['x-frame-options']).toBeUndefined();
    for (const url of ['/cabinet/sign-in', '/cabinet']) {
      const page = await get(h, url);
      expect(page.headers['x-frame-options'], url).toBe('DENY');
      expect(page.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
    }
  });
});
