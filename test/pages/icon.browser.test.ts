import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserKit, startBrowserKit } from '../browser/kit.js';
import { newShop } from '../harness.js';

/**
 * Every page has its icon, so a browser's request for it is never a 404: the icon a page links (or,
 * without a link, /favicon.ico, where browsers look then) loads as an image in the page, on a hosted
 * page and in the cabinet; and /favicon.ico itself is an image for the clients that ask there
 * whatever the page says. (The headless browser the tests drive fetches no icon by itself, so the
 * page fetches it as a browser would.)
 */

let kit: BrowserKit;
beforeAll(async () => {
  kit = await startBrowserKit();
});
afterAll(async () => {
  await kit?.stop();
});

describe('the pages’ icon', () => {
  it('loads as an image on a hosted page and in the cabinet, and at /favicon.ico', async () => {
    const shop = await newShop(kit.h, { test: true });
    const product = await kit.api(shop, 'POST', '/products', {
      name: 'Green tea',
      description: 'Loose leaf',
      currency: 'EUR',
      amount: 1290,
    });
    expect(product.status).toBe(201);
    for (const url of [product.body.pay_url as string, `${kit.base}/cabinet/sign-in`]) {
      await kit.withPage(async (page) => {
        await page.goto(url);
        const icons = await page.evaluate(async () => {
          const linked = [...document.querySelectorAll<HTMLLinkElement>('link[rel~="icon"]')].map(
            (l) => l.href,
          );
          const hrefs = linked.length > 0 ? linked : [new URL('/favicon.ico', location.href).href];
          return Promise.all(
            [...hrefs, new URL('/favicon.ico', location.href).href].map(async (href) => {
              const res = await fetch(href);
              const image = new Image();
              image.src = href;
              const decoded = await image.decode().then(
                () => image.naturalWidth,
                () => 0,
              );
              return { href, status: res.status, type: res.headers.get('content-type'), width: decoded };
            }),
          );
        });
        expect(icons.length, url).toBeGreaterThan(1);
        for (const icon of icons) {
          expect(icon, url).toMatchObject({ status: 200, type: expect.stringMatching(/^image\//) });
          expect(icon.width, icon.href).toBeGreaterThan(0);
        }
      });
    }
  });
});
