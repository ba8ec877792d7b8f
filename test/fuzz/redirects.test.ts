import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { client, harness, newShop, TEST_PUBLIC_URL, type TestShop } from '../harness.js';
import { encode } from './encode.js';

/**
 * Control characters (CR, LF, NUL, DEL, the C1 range), Latin-1 and letters beyond it, lone
 * surrogates and broken escapes in every parameter a page redirects by (the cabinet's `next` and
 * `back`, the page a visitor without a session asked for) and in the language, token and order
 * parameters of every hosted page: the answer is never a 5xx, and every Location is a valid,
 * percent-encoded address of this origin (a cabinet path, for the cabinet's redirects).
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

const h = await harness();
let shop: TestShop;
let productId = 'prd_x';
let checkoutToken = 'x';
let subscriptionToken = 'x';

beforeAll(async () => {
  shop = await newShop(h);
  const api = client(h, shop);
  const product = await api.post('/products', {
    name: 'Fuzz',
    description: 'A product',
    currency: 'USD',
    amount: 100,
    language: 'en',
  });
  productId = product.body.id;
  const checkout = await api.post('/ctp/api/checkouts', {
    checkout: {
      transaction_type: 'payment',
      order: { amount: 500, currency: 'USD', description: 'Order 1' },
    },
  });
  checkoutToken = checkout.body.checkout.token;
  const sub = await api.post('/subscriptions', {
    plan: { title: 'Gold', currency: 'USD', plan: { amount: 500, interval: 1, interval_unit: 'month' } },
  });
  subscriptionToken = sub.body.token;
});

/** Text of the kinds that broke redirects: controls, Latin-1, beyond, surrogates, escapes, slashes. */
const nasty: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '\n',
    '\r\n',
    '\r',
    '\t',
    '\u0000',
    '\u007f',
    '\u0085',
    '\u009f',
    '\u00a0',
    'é',
    '\u00ff',
    '\u0100',
    '\u2028',
    '日本',
    '\ud83d\udc15',
    '\ud800',
    'x\udc00',
    '\u202e',
    '%',
    '%zz',
    '//evil.test',
    '/\\evil.test',
    '../..',
    '%0d%0aSet-Cookie: x=1',
    'env;',
    ' ',
    '"<>`{|}^\\',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x2ff }).map((c) => String.fromCharCode(c)), maxLength: 12 }),
);

/** A redirect target: a cabinet path with nasty text in it, or nasty text alone. */
const target: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(fc.constantFrom('/cabinet/', '/cabinet', '/cabinet/payments?q=', '/cabinet?'), nasty, nasty)
    .map(([a, b, c]) => `${a}${b}${c}`),
  fc.tuple(nasty, fc.constantFrom('', '/cabinet')).map(([a, b]) => `${a}${b}`),
);

/** Sent in the query: percent-encoded as a browser would, or (a broken escape) as it is. */
const inQuery: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: target.map(encode) },
  fc.constantFrom('%', '%2', '%ED%A0%80', '%C0%80', '%FF', '/cabinet/%0A', '/cabinet/%E9', '/cabinet/%C3%A9'),
);

/**
 * Text no store can keep (U+0000, an unpaired surrogate) is refused before any handler, as everywhere
 * (src/http/validation.ts): a 4xx, not a redirect.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is one of the characters meant
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function decoded(query: string): string {
  try {
    return decodeURIComponent(query);
  } catch {
    return '';
  }
}

/** RFC 3986's characters only, each `%` starting an escape. */
const ADDRESS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]*$/;

function expectSafeAnswer(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  what: string,
  cabinet: boolean,
): void {
  const told = `${what} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
  expect(res.statusCode, told).toBeLessThan(500);
  const location = res.headers.location;
  if (res.statusCode < 300 || res.statusCode >= 400) return;
  expect(typeof location, told).toBe('string');
  const text = location as string;
  expect(ADDRESS.test(text.replace(/%[0-9A-Fa-f]{2}/g, '')), `${told} Location ${JSON.stringify(text)}`).toBe(
    true,
  );
  const resolved = new URL(text, TEST_PUBLIC_URL);
  expect(resolved.origin, `${told} Location ${text}`).toBe(new URL(TEST_PUBLIC_URL).origin);
  if (cabinet) expect(resolved.pathname, `${told} Location ${text}`).toMatch(/^\/cabinet(\/|$)/);
}

const get = (url: string, cookie = '') =>
  h.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {}, remoteAddress: '10.39.250.1' });

let ipSeq = 1;

describe('fuzz: redirect parameters never cause a 5xx, and Location stays on this origin', {
  timeout: 180_000,
}, () => {
  it('GET /cabinet/language?back=', async () => {
    await fc.assert(
      fc.asyncProperty(inQuery, fc.constantFrom('en', 'ru'), async (back, to) => {
        const url = `/cabinet/language?to=${to}&back=${back}`;
        expectSafeAnswer(await get(url), `GET ${url}`, true);
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('GET /cabinet/sign-in?next= carries a safe next into its form', async () => {
    await fc.assert(
      fc.asyncProperty(inQuery, async (next) => {
        const url = `/cabinet/sign-in?next=${next}`;
        const res = await get(url);
        expect(res.statusCode, url).toBeLessThan(500);
        if (UNSTORABLE.test(decoded(next))) return;
        expect(res.statusCode, url).toBe(200);
        const kept = /name="next" value="([^"]*)"/.exec(res.body)?.[1] ?? '';
        expect(ADDRESS.test(kept.replace(/%[0-9A-Fa-f]{2}/g, '').replaceAll('&amp;', '&')), kept).toBe(true);
        expect(kept, url).toMatch(/^\/cabinet(\/|\?|$)/);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('POST /cabinet/sign-in next= with the right key: a session and a safe Location', async () => {
    await fc.assert(
      fc.asyncProperty(target, async (next) => {
        const ip = `10.39.251.${(ipSeq++ % 250) + 1}`;
        const form = await h.app.inject({ method: 'GET', url: '/cabinet/sign-in', remoteAddress: ip });
        const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
        const res = await h.app.inject({
          method: 'POST',
          url: '/cabinet/sign-in',
          headers: {
            cookie: form.cookies.map((k) => `${k.name}=${k.value}`).join('; '),
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: new URLSearchParams({
            _csrf: csrf,
            shop_id: String(shop.shop.id),
            secret_key: shop.secret,
            next,
          }).toString(),
          remoteAddress: ip,
        });
        expect(res.statusCode, JSON.stringify(next)).toBeLessThan(500);
        if (UNSTORABLE.test(next)) return;
        expect(res.statusCode, JSON.stringify(next)).toBe(303);
        expectSafeAnswer(res, `POST next=${JSON.stringify(next)}`, true);
        expect(res.cookies.some((k) => k.name === 'kopek_session' && k.value !== '')).toBe(true);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('a cabinet page without a session sends to sign-in with the page, encoded', async () => {
    const pages = ['', '/payments', '/subscriptions', '/customers', '/notifications', '/emails', '/settings'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...pages), inQuery, inQuery, async (page, a, b) => {
        const url = `/cabinet${page}?q=${a}&email=${b}`;
        const res = await get(url, 'kopek_session=none');
        expectSafeAnswer(res, `GET ${url}`, true);
        if (UNSTORABLE.test(decoded(a)) || UNSTORABLE.test(decoded(b))) return;
        expect(res.statusCode, url).toBe(303);
        const next = new URL(res.headers.location as string, TEST_PUBLIC_URL).searchParams.get('next');
        expect(next ?? '', url).toMatch(/^\/cabinet(\/|\?|$)/);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('the hosted pages, whatever their lang, token and order hold', async () => {
    const pages = () => [
      `/products/${productId}/pay`,
      `/products/${productId}/pay/result`,
      `/v2/confirm_order/${productId}/${shop.shop.id}`,
      `/v2/checkout`,
      '/process/00000000-0000-4000-8000-000000000000',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.nat(4),
        inQuery,
        inQuery,
        fc.constantFrom(checkoutToken, subscriptionToken, ''),
        async (i, lang, extra, token) => {
          const page = pages()[i] as string;
          const tokenPart = page === '/v2/checkout' ? `&token=${token || extra}` : `&order=${extra}`;
          const url = `${page}?lang=${lang}${tokenPart}&back=${extra}&next=${extra}`;
          expectSafeAnswer(await get(url), `GET ${url}`, false);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });
});
