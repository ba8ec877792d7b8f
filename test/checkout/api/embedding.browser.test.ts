import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pemBody } from '../../../src/shops/settings.js';
import { type BrowserKit, startBrowserKit } from '../../browser/kit.js';
import { newShop, type TestShop } from '../../harness.js';

/**
 * The payment form embedded in a shop's own page, in Chromium (docs/embedding.md). The shop's page
 * is served from 127.0.0.2, another site than Kopek's 127.0.0.1: the frame is cross-site, so the
 * browser keeps none of Kopek's cookies in it, and no part of a payment may need one. Shop pages use
 * the platform's own widget library, unchanged (test/fixtures/begateway-js), and Kopek's widget
 * script; the buyer pays, is declined and tries again, passes 3-D Secure inside the frame, meets an
 * expired token, and the shop's whole window ends on the right address. The cabinet cannot be framed.
 */

const LIBRARY = readFileSync(new URL('../../fixtures/begateway-js/begateway-1.3.0.min.js', import.meta.url));

let kit: BrowserKit;
let site: { url: string; server: Server };
const violations: string[] = [];

/** The shop's site on another loopback address: pages made from the query, and its landing pages. */
async function startShopPages(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.2');
    if (url.pathname === '/begateway-1.3.0.min.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(LIBRARY);
      return;
    }
    const html = (head: string, body: string) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html lang="en"><head><title>Shop</title>${head}</head><body>${body}</body></html>`,
      );
    };
    // JSON in a script: `<` escaped, so nothing the query holds can close the script.
    const script = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
    const options = JSON.parse(url.searchParams.get('options') ?? '{}');
    if (url.pathname === '/platform.html') {
      // The library's own example pages (inline.html, overlay.html), with the options of the query.
      const anchor =
        options.type === 'overlay'
          ? '<a href="#" id="paymentLink">Buy it</a>'
          : '<div id="paymentForm"></div>';
      html(
        '<script src="/begateway-1.3.0.min.js"></script>',
        `<h1>Test shop</h1><p>T-Shirt 5 EUR</p>${anchor}
<script>var pf = new BeGateway(${script(options)}); pf.buildForm();</script>`,
      );
      return;
    }
    if (url.pathname === '/kopek.html') {
      // Kopek's widget script, pinned with its integrity hash, as docs/embedding.md shows.
      const { src, integrity } = JSON.parse(url.searchParams.get('script') ?? '{}');
      html(
        `<script src="${src}" integrity="${integrity}" crossorigin="anonymous"></script>`,
        `<h1>Test shop</h1><div id="pay-here"></div><button id="pay">Pay</button>
<script>
  var params = ${script(options)};
  params.closeWidget = function (status) { sessionStorage.setItem('closed', String(status)); };
  document.getElementById('pay').addEventListener('click', function () { new BeGateway(params).createWidget(); });
</script>`,
      );
      return;
    }
    if (url.pathname === '/frame.html') {
      html('', `<iframe src="${url.searchParams.get('src')}" width="320" height="480"></iframe>`);
      return;
    }
    html('', '<h1>Back at the shop</h1>');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.2', () => resolve());
  });
  return { url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  kit = await startBrowserKit();
  site = await startShopPages();
});

afterAll(async () => {
  await new Promise((resolve) => site?.server.close(resolve));
  // Nothing on Kopek's pages breaks their Content-Security-Policy (no inline script or style).
  expect(violations).toEqual([]);
});

const checkoutBody = (extra: Record<string, unknown> = {}) => ({
  checkout: {
    transaction_type: 'payment',
    attempts: 3,
    order: { amount: 500, currency: 'EUR', description: 'T-Shirt' },
    settings: {
      success_url: `${site.url}/ok`,
      decline_url: `${site.url}/declined`,
      fail_url: `${site.url}/fail`,
      language: 'en',
    },
    ...extra,
  },
});

async function openCheckout(shop: TestShop, extra: Record<string, unknown> = {}) {
  const res = await kit.api(shop, 'POST', '/ctp/api/checkouts', checkoutBody(extra));
  expect(res.status).toBe(201);
  return res.body.checkout as { token: string; redirect_url: string };
}

/** The page with the platform's network calls (its error reporter) cut off, and Kopek's requests watched. */
function watch(page: Page): { cookies: string[] } {
  const seen = { cookies: [] as string[] };
  void page.route(/sentry/, (route) => route.abort());
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to (execute|apply|load)/i.test(message.text()))
      violations.push(message.text());
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(kit.base)) return;
    void request.allHeaders().then((headers) => {
      if (headers.cookie) seen.cookies.push(`${request.url()}: ${headers.cookie}`);
    });
  });
  return seen;
}

/** Kopek's frame in the shop's page, once its form or result has loaded. */
async function kopekFrame(
  page: Page,
  path: string | RegExp = /\/(widget\/hpp\.html|v2\/checkout)/,
): Promise<Frame> {
  for (;;) {
    const frame = page
      .frames()
      .find(
        (f) =>
          f !== page.mainFrame() && f.url().startsWith(kit.base) && new URL(f.url()).pathname.match(path),
      );
    if (frame) {
      await frame.waitForLoadState('load');
      return frame;
    }
    await page.waitForTimeout(50);
  }
}

async function fillCard(frame: Frame, number: string) {
  await frame.locator('input[name="card_number"]').fill(number);
  await frame.locator('input[name="card_holder"]').fill('JANE DOE');
  await frame.locator('input[name="card_exp_month"]').fill('12');
  await frame.locator('input[name="card_exp_year"]').fill('2030');
  await frame.locator('input[name="card_cvc"]').fill('123');
}

const platformPage = (options: Record<string, unknown>) =>
  `${site.url}/platform.html?options=${encodeURIComponent(JSON.stringify(options))}`;

describe("the platform's widget library on the shop's page", () => {
  it('inline: the form fits the frame, takes the shop CSS, is declined, then pays; the shop window ends on success_url', async () => {
    const shop = await newShop(kit.h, { name: 'Framed shop' });
    const { token, redirect_url } = await openCheckout(shop);
    expect(redirect_url).toBe(`${kit.base}/widget/hpp.html?token=${token}`);
    await kit.withPage(async (page) => {
      const seen = watch(page);
      await page.goto(
        platformPage({
          type: 'inline',
          id: 'paymentForm',
          url: redirect_url,
          style: '.card { border-top: 4px solid rgb(0, 128, 0); }',
          size: { width: 320, height: 480 },
        }),
      );
      let frame = await kopekFrame(page);
      expect(new URL(frame.url()).searchParams.get('iframe')).toBe('inline');
      // The shop's safe CSS is applied; the pay button shows in 320×480 without scrolling.
      await frame.locator('body[data-frame-css="applied"]').waitFor();
      expect(
        await frame.evaluate(
          () => getComputedStyle(document.querySelector('.card') as Element).borderTopColor,
        ),
      ).toBe('rgb(0, 128, 0)');
      // CSS that could load something or read the card fields is ignored as a whole.
      const unsafe = [
        '.card { border-top-color: rgb(255, 0, 0); } input[value^="4"] { color: red; }',
        '@import "https://evil.example/x.css"; .card { border-top-color: rgb(255, 0, 0); }',
        '.card { border-top-color: rgb(255, 0, 0); background: \\75 rl(https://evil.example/x); }',
        '.card { border-top-color: rgb(255, 0, 0); background-image: image-set("x.png" 1x); }',
        'form:has(input[name="card_number"]) .card { border-top-color: rgb(255, 0, 0); }',
      ];
      await page.evaluate((list) => {
        const target = document.querySelector('iframe') as HTMLIFrameElement;
        for (const css of list) target.contentWindow?.postMessage({ css }, '*');
      }, unsafe);
      await page.waitForTimeout(300);
      expect(
        await frame.evaluate(
          () => getComputedStyle(document.querySelector('.card') as Element).borderTopColor,
        ),
      ).toBe('rgb(0, 128, 0)');
      const fit = await frame.evaluate(() => ({
        bottom: (document.querySelector('button[type="submit"]') as Element).getBoundingClientRect().bottom,
        height: window.innerHeight,
        width: window.innerWidth,
      }));
      expect(fit.width).toBe(320);
      expect(fit.bottom).toBeLessThanOrEqual(fit.height);
      await kit.screenshot(page, 'embedded-inline-form');

      // Declined with tries left: the form shows again in the frame, the shop's window stays.
      await fillCard(frame, '4005 5500 0000 0019');
      await frame.locator('button[type="submit"]').click();
      await page.waitForFunction(
        (base) => [...document.querySelectorAll('iframe')].some((f) => f.src.startsWith(base)),
        kit.base,
      );
      frame = await kopekFrame(page);
      await frame.getByText('Tries left: 2').waitFor();
      expect(new URL(page.url()).pathname).toBe('/platform.html');

      await fillCard(frame, '4200 0000 0000 0000');
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/ok', { timeout: 30_000 }),
        frame.locator('button[type="submit"]').click(),
      ]);
      const landed = new URL(page.url());
      expect(landed.origin).toBe(site.url);
      expect(landed.searchParams.get('token')).toBe(token);
      expect(landed.searchParams.get('status')).toBe('successful');
      expect(landed.searchParams.get('uid')).toMatch(/^[0-9a-f-]{36}$/);
      // No cookie was ever needed, nor sent: the frame is cross-site.
      expect(seen.cookies).toEqual([]);
    });
    const got = await kit.api(shop, 'GET', `/ctp/api/checkouts/${token}`);
    expect(got.body.checkout).toMatchObject({ status: 'successful', finished: true });
  });

  it('overlay: 3-D Secure passes inside the frame, and the shop window ends on success_url', async () => {
    const shop = await newShop(kit.h, { name: 'Overlay shop', threeDs: true });
    const { token } = await openCheckout(shop);
    await kit.withPage(async (page) => {
      const seen = watch(page);
      // The library's overlay finds its stylesheet next to a `…/checkout` address: the page's older
      // address, which shows the same page.
      await page.goto(
        platformPage({
          type: 'overlay',
          id: 'paymentLink',
          url: `${kit.base}/v2/checkout?token=${token}`,
          style: 'body { background: url(https://evil.example/x.png); }',
          size: { width: 320, height: 480 },
        }),
      );
      await page.locator('#paymentLink').click();
      let frame = await kopekFrame(page);
      expect(new URL(frame.url()).searchParams.get('iframe')).toBe('overlay');
      // CSS that could fetch is ignored as a whole.
      await page.waitForTimeout(200);
      expect(await frame.locator('body').getAttribute('data-frame-css')).toBeNull();
      await fillCard(frame, '4012 0000 0000 1097');
      await frame.locator('button[type="submit"]').click();
      frame = await kopekFrame(page, /^\/process\//);
      await frame.getByRole('heading', { name: '3-D Secure authentication' }).waitFor();
      // Laid out for the frame too: the bank's button shows without scrolling.
      const pass = frame.getByRole('button', { name: 'Pass authentication', exact: true });
      expect(await frame.evaluate(() => window.innerHeight)).toBe(480);
      expect((await pass.evaluate((b) => b.getBoundingClientRect().bottom)) <= 480).toBe(true);
      await kit.screenshot(page, 'embedded-overlay-3ds');
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/ok', { timeout: 30_000 }),
        frame.getByRole('button', { name: 'Pass authentication', exact: true }).click(),
      ]);
      const landed = new URL(page.url());
      expect(landed.searchParams.get('token')).toBe(token);
      expect(landed.searchParams.get('status')).toBe('successful');
      expect(seen.cookies).toEqual([]);
    });
  });
});

describe("Kopek's widget script on the shop's page", () => {
  const kopekPage = async (options: Record<string, unknown>) => {
    const meta = await (await fetch(`${kit.base}/widget/be_gateway.json`)).json();
    return `${site.url}/kopek.html?script=${encodeURIComponent(JSON.stringify(meta))}&options=${encodeURIComponent(JSON.stringify(options))}`;
  };

  it('inline, with an expired token: closeWidget("error") and the shop window goes to fail_url', async () => {
    const shop = await newShop(kit.h, { name: 'Late shop' });
    const { token } = await openCheckout(shop);
    // The test shop's clock passes the checkout's 24 hours.
    expect((await kit.api(shop, 'POST', '/test_clock/advance', { by: 'PT25H' })).status).toBe(200);
    await kit.withPage(async (page) => {
      watch(page);
      await page.goto(
        await kopekPage({ checkout_url: kit.base, token, anchor: 'pay-here', checkout: { iframe: true } }),
      );
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/fail', { timeout: 30_000 }),
        page.locator('#pay').click(),
      ]);
      const landed = new URL(page.url());
      expect(landed.searchParams.get('token')).toBe(token);
      expect(landed.searchParams.get('status')).toBe('error');
      expect(await page.evaluate(() => sessionStorage.getItem('closed'))).toBe('error');
    });
  });

  it("overlay, with the shop's public key: the token is made on the fly, the buyer pays, closeWidget('successful')", async () => {
    const keys = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const shop = await newShop(kit.h, { name: 'Keyed shop', signingKeys: keys });
    // Only the shop's own site may frame its pages or make its checkouts.
    await kit.api(shop, 'PATCH', '/shop', { frame_origins: [site.url] });
    await kit.withPage(async (page) => {
      const seen = watch(page);
      await page.goto(
        await kopekPage({
          checkout_url: kit.base,
          checkout: {
            iframe: true,
            test: true,
            transaction_type: 'payment',
            public_key: pemBody(keys.publicKey),
            order: { amount: 100, currency: 'EUR', description: 'Payment description', tracking_id: 'my_id' },
            settings: { success_url: `${site.url}/ok`, decline_url: `${site.url}/declined`, language: 'en' },
          },
        }),
      );
      await page.locator('#pay').click();
      const frame = await kopekFrame(page);
      expect(await page.locator('[data-begateway-overlay]').count()).toBe(1);
      await fillCard(frame, '4200 0000 0000 0000');
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/ok', { timeout: 30_000 }),
        frame.locator('button[type="submit"]').click(),
      ]);
      const landed = new URL(page.url());
      expect(landed.searchParams.get('status')).toBe('successful');
      expect(await page.evaluate(() => sessionStorage.getItem('closed'))).toBe('successful');
      expect(seen.cookies).toEqual([]);
      const got = await kit.api(shop, 'GET', `/ctp/api/checkouts/${landed.searchParams.get('token')}`);
      expect(got.body.checkout).toMatchObject({ status: 'successful', order: { tracking_id: 'my_id' } });
    });
  });
});

describe('pages that are not the payment form', () => {
  it('the cabinet cannot be framed by the shop page', async () => {
    await kit.withPage(async (page) => {
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/frame-ancestors|X-Frame-Options/i.test(message.text())) refused.push(message.text());
      });
      await page.goto(`${site.url}/frame.html?src=${encodeURIComponent(`${kit.base}/cabinet/sign-in`)}`);
      await page.waitForLoadState('load');
      const signIn = page.frames().filter((f) => f !== page.mainFrame());
      expect(signIn).toHaveLength(1);
      // Chromium shows its error page instead: the sign-in form never renders in the frame.
      expect(await (signIn[0] as Frame).locator('input[name="secret_key"]').count()).toBe(0);
      expect(refused.join('\n')).toMatch(/frame-ancestors|X-Frame-Options/);
    });
  });
});
