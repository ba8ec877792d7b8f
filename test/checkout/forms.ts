import type { Harness } from '../harness.js';

/** A buyer's browser without a browser: GET the page, keep its cookies (none now) and CSRF token, post the form. */
export interface PageVisit {
  status: number;
  html: string;
  cookie: string;
  csrf: string;
}

export async function openPage(h: Pick<Harness, 'app'>, token: string, query = ''): Promise<PageVisit> {
  const res = await h.app.inject({
    method: 'GET',
    url: `/v2/checkout?token=${encodeURIComponent(token)}${query}`,
  });
  const setCookie = res.headers['set-cookie'];
  const cookies = (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []).map(
    (c) => c.split(';')[0],
  );
  const csrf = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  return { status: res.statusCode, html: res.body, cookie: cookies.join('; '), csrf };
}

export const goodCard = (number = '4200000000000000') => ({
  card_number: number.replace(/(\d{4})/g, '$1 ').trim(),
  card_holder: 'JANE DOE',
  card_exp_month: '12',
  card_exp_year: '2030',
  card_cvc: '123',
});

export async function postForm(
  h: Pick<Harness, 'app'>,
  visit: PageVisit,
  token: string,
  fields: Record<string, string>,
) {
  const body = new URLSearchParams({ _csrf: visit.csrf, token, ...fields }).toString();
  const res = await h.app.inject({
    method: 'POST',
    url: '/v2/checkout',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: visit.cookie },
    payload: body,
  });
  return { status: res.statusCode, html: res.body, location: res.headers.location as string | undefined };
}
