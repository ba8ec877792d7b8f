import { expect } from 'vitest';
import { client, type Harness, type TestShop } from '../../harness.js';

/** Products, forms and posts of the product payment page, in-process (app.inject). */

export const CARDS = {
  approved: '4200000000000000',
  declined: '4005550000000019',
  challenge: '4012000000001097',
  frictionless: '4012000000001006',
};

export async function makeProduct(h: Harness, shop: TestShop, fields: Record<string, unknown> = {}) {
  const res = await client(h, shop).post('/products', {
    name: 'Tea set',
    description: 'Six cups and a pot',
    currency: 'USD',
    amount: 2500,
    language: 'en',
    ...fields,
  });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; pay_url: string; confirm_url: string; quantity: number | null };
}

/** The path of an absolute address the app printed (pay_url, confirm_url, a redirect). */
export const pathOf = (url: string) => {
  const u = new URL(url, 'http://kopek.test');
  return `${u.pathname}${u.search}`;
};

export interface OpenForm {
  status: number;
  html: string;
  cookie: string;
  csrf: string;
  order: string;
}

const attr = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

export async function openForm(h: Harness, path: string): Promise<OpenForm> {
  const res = await h.app.inject({ method: 'GET', url: path });
  const setCookie = res.headers['set-cookie'];
  const cookies = (Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []).map(
    (c) => c.split(';')[0],
  );
  return {
    status: res.statusCode,
    html: res.body,
    cookie: cookies.join('; '),
    csrf: attr(res.body, '_csrf'),
    order: attr(res.body, 'order'),
  };
}

export function cardFields(number = CARDS.approved): Record<string, string> {
  return {
    card_number: number,
    card_holder: 'ANNA BUYER',
    card_exp_month: '12',
    card_exp_year: '2040',
    card_cvc: '123',
  };
}

export async function submit(h: Harness, path: string, form: OpenForm, fields: Record<string, string>) {
  const res = await h.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    payload: new URLSearchParams({ _csrf: form.csrf, order: form.order, ...fields }).toString(),
  });
  return { status: res.statusCode, html: res.body, location: res.headers.location as string | undefined };
}

/** Opens the page and pays with these fields; follows nothing. */
export async function payOnce(h: Harness, path: string, fields: Record<string, string> = cardFields()) {
  const form = await openForm(h, path);
  expect(form.status, form.html).toBe(200);
  return { form, ...(await submit(h, path, form, fields)) };
}

export async function getPage(h: Harness, path: string) {
  const res = await h.app.inject({ method: 'GET', url: path });
  return { status: res.statusCode, html: res.body, location: res.headers.location as string | undefined };
}

export async function transactionsOfProduct(h: Harness, productId: string) {
  return h.db.query<{ uid: string; type: string; status: string; tracking_id: string; details: any }>(
    `SELECT uid, type, status, tracking_id, details FROM transactions
     WHERE details -> 'additional_data' ->> 'product_id' = $1 ORDER BY seq`,
    [productId],
  );
}

export async function quantityOf(h: Harness, productId: string): Promise<number | null> {
  const [row] = await h.db.query<{ quantity: number | null }>('SELECT quantity FROM products WHERE id = $1', [
    productId,
  ]);
  return row?.quantity === null || row?.quantity === undefined ? null : Number(row.quantity);
}
