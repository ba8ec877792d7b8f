import type { Harness, TestShop } from '../harness.js';

/**
 * Signing in to the cabinet in-process (app.inject): keeps the cookies a browser would, and reads
 * each page's CSRF token so tests can post its forms.
 */
export interface Answer {
  status: number;
  body: string;
  location?: string;
  /** Retry-After, in seconds, on a 429. */
  retryAfter?: number;
}

export interface CabinetClient {
  get(url: string): Promise<Answer>;
  /** Posts a form with the CSRF token of the page last fetched (or `_csrf` given explicitly). */
  post(url: string, form: Record<string, string>): Promise<Answer>;
  csrf: () => string;
  cookies: Map<string, string>;
}

export function csrfOf(html: string): string {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
}

export function cabinetClient(h: Harness, ip = '127.0.0.1'): CabinetClient {
  const cookies = new Map<string, string>();
  let token = '';
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: { cookies: Array<{ name: string; value: string; maxAge?: number }> }) => {
    for (const c of res.cookies) {
      if (c.value === '' || c.maxAge === 0) cookies.delete(c.name);
      else cookies.set(c.name, c.value);
    }
  };
  const answer = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => ({
    status: res.statusCode,
    body: res.body,
    ...(typeof res.headers.location === 'string' ? { location: res.headers.location } : {}),
    ...(res.headers['retry-after'] !== undefined ? { retryAfter: Number(res.headers['retry-after']) } : {}),
  });
  return {
    cookies,
    csrf: () => token,
    async get(url) {
      const res = await h.app.inject({
        method: 'GET',
        url,
        headers: { cookie: header() },
        remoteAddress: ip,
      });
      remember(res);
      const found = csrfOf(res.body);
      if (found) token = found;
      return answer(res);
    },
    async post(url, form) {
      const res = await h.app.inject({
        method: 'POST',
        url,
        headers: { cookie: header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: token, ...form }).toString(),
        remoteAddress: ip,
      });
      remember(res);
      const found = csrfOf(res.body);
      if (found) token = found;
      return answer(res);
    },
  };
}

/** A client already signed in as the shop. */
export async function signedIn(h: Harness, shop: TestShop, ip?: string): Promise<CabinetClient> {
  const c = cabinetClient(h, ip);
  await c.get('/cabinet/sign-in');
  const res = await c.post('/cabinet/sign-in', { shop_id: String(shop.shop.id), secret_key: shop.secret });
  if (res.status !== 303) throw new Error(`sign-in failed with ${res.status}`);
  return c;
}
