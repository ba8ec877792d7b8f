import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/compose/app.js';
import { loadConfig } from '../../../src/config.js';
import { freePort } from '../../foundation/kopek-process.js';
import { type Harness, harness, newShop, TEST_PUBLIC_URL, type TestShop, withClock } from '../../harness.js';
import {
  CARDS,
  cardFields,
  getPage,
  makeProduct,
  openForm,
  pathOf,
  payOnce,
  quantityOf,
  submit,
  transactionsOfProduct,
} from './helpers.js';

/** What a buyer sees when something is wrong: always a page in their language, never JSON or a 500. */

let h: Harness;
let shop: TestShop;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
});

describe('links that name no payable product', () => {
  it('answers unknown, malformed and foreign ids with the not-found page', async () => {
    const product = await makeProduct(h, shop);
    const other = await newShop(h);
    for (const path of [
      '/products/prd_unknown123/pay',
      '/products/not-an-id/pay',
      `/v2/confirm_order/${product.id}/${other.shop.id}`,
      `/v2/confirm_order/${product.id}/abc`,
      '/v2/confirm_order/prd_unknown123/1',
      `/products/${product.id}/pay/result?order=${'a'.repeat(32)}`,
      `/products/${product.id}/pay/result`,
    ]) {
      const page = await getPage(h, path);
      expect(page.status, path).toBe(404);
      expect(page.html).toContain('Page not found');
    }
  });

  it('speaks the browser language on the not-found page', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: '/products/prd_unknown123/pay',
      headers: { 'accept-language': 'ru-RU,ru;q=0.9' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('<html lang="ru">');
    expect(res.body).toContain('Страница не найдена');
  });

  it('shows sold out and expired pages, in the product language', async () => {
    const soldOut = await makeProduct(h, shop, { quantity: 0, language: 'ru', test: true });
    const page = await getPage(h, pathOf(soldOut.pay_url));
    expect(page.status).toBe(410);
    expect(page.html).toContain('Товар распродан');
    expect(page.html).toContain('class="test-banner"');

    // An expiry must lie ahead when it is given: these expire a minute from now, and are looked at after.
    const soon = new Date(h.clock.now().getTime() + 60_000).toISOString();
    const expired = await makeProduct(h, shop, { expired_at: soon });
    const immortal = await makeProduct(h, shop, { expired_at: soon, immortal: true });
    await withClock(h, 120_000, async () => {
      const gone = await getPage(h, pathOf(expired.pay_url));
      expect(gone.status).toBe(410);
      expect(gone.html).toContain('This offer has expired');
      expect((await getPage(h, pathOf(immortal.pay_url))).status).toBe(200);
    });
  });

  it('refuses to charge a product that expired while the buyer was on the page', async () => {
    const product = await makeProduct(h, shop, { expired_at: '2099-01-01T00:00:00Z' });
    const path = pathOf(product.pay_url);
    const form = await openForm(h, path);
    await h.db.query(`UPDATE products SET expires_at = '2020-01-01' WHERE id = $1`, [product.id]);
    const res = await submit(h, path, form, cardFields());
    expect(res.status).toBe(410);
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(0);
  });
});

describe('the form', () => {
  it('requires every visible field and shows each problem beside its field, keeping the values', async () => {
    const product = await makeProduct(h, shop, {
      quantity: 1,
      visible_fields: ['email', 'phone', 'first_name', 'country', 'zip', 'state', 'birth_date'],
    });
    const path = pathOf(product.pay_url);
    const res = await payOnce(h, path, {
      ...cardFields(),
      email: 'anna@',
      phone: 'call me',
      first_name: 'Anna',
      country: 'US',
      zip: '1234',
      state: 'California',
      birth_date: '2999-01-01',
    });
    expect(res.status).toBe(422);
    expect(res.html).toContain('Please correct the following');
    expect(res.html).toContain('Enter an e-mail address like name@example.com');
    expect(res.html).toContain('Enter a phone number of digits, with the country code');
    expect(res.html).toContain('Enter a US ZIP code');
    expect(res.html).toContain('Enter the two-letter code of the state or province');
    expect(res.html).toContain('Enter a real date of birth');
    expect(res.html).toContain('aria-invalid="true"');
    expect(res.html).toContain('value="Anna"');
    expect(res.html).toContain('<option value="US" selected>');
    expect(res.html).toContain('value="ANNA BUYER"');
    // The card number and CVC are never written back.
    expect(res.html).not.toContain(CARDS.approved);
    expect(res.html).not.toContain('value="123"');
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(0);
    expect(await quantityOf(h, product.id)).toBe(1);

    const blank = await payOnce(h, path, cardFields());
    expect(blank.status).toBe(422);
    expect(blank.html.match(/Fill in this field/g)?.length).toBeGreaterThanOrEqual(7);
  });

  it("shows the gateway's card problems on the card fields, without taking a unit", async () => {
    const product = await makeProduct(h, shop, { quantity: 1, language: 'ru' });
    const res = await payOnce(h, pathOf(product.pay_url), {
      ...cardFields('4200000000000001'),
      card_exp_month: '13',
      card_cvc: '1',
    });
    expect(res.status).toBe(422);
    expect(res.html).toContain('Такого номера карты нет: одна из цифр неверна');
    expect(res.html).toContain('Введите месяц двумя цифрами');
    expect(res.html).toContain('Введите код безопасности');
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(0);
    expect(await quantityOf(h, product.id)).toBe(1);

    const expired = await payOnce(h, pathOf(product.pay_url), {
      ...cardFields(),
      card_exp_month: '01',
      card_exp_year: '2020',
    });
    expect(expired.status).toBe(422);
    expect(expired.html).toContain('Срок действия карты истёк');
  });

  it('says a mistyped 16-digit number is not valid, and shows the expiry problem beside it', async () => {
    const product = await makeProduct(h, shop);
    const path = pathOf(product.pay_url);
    const mistyped = { ...cardFields('4200000000000001'), card_exp_month: '01', card_exp_year: '2020' };
    const res = await payOnce(h, path, mistyped);
    expect(res.status).toBe(422);
    const fieldError = (name: string) => new RegExp(`id="f-${name}-error">([^<]*)<`).exec(res.html)?.[1];
    expect(fieldError('card_number')).toBe(
      'This card number is not valid: a digit is wrong. Check it against the card',
    );
    expect(res.html).not.toContain('12 to 19 digits');
    expect(fieldError('card_exp_year')).toBe('This card has expired');
    // A number of the wrong length still says how long a number is.
    const short = await payOnce(h, path, cardFields('4200 0000'));
    expect(short.html).toContain('12 to 19 digits as printed');
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(0);
  });

  it('refuses a form without its CSRF token or its order token', async () => {
    const product = await makeProduct(h, shop);
    const path = pathOf(product.pay_url);
    const form = await openForm(h, path);
    const forged = await submit(h, path, { ...form, csrf: 'forged' }, cardFields());
    expect(forged.status).toBe(403);
    expect(forged.html).toContain('This form has expired');
    const noOrder = await submit(h, path, { ...form, order: '' }, cardFields());
    expect(noOrder.status).toBe(400);
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(0);
  });

  it('answers a body it cannot read with a page, not JSON', async () => {
    const product = await makeProduct(h, shop);
    const res = await h.app.inject({
      method: 'POST',
      url: pathOf(product.pay_url),
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['content-type']).toContain('text/html');
  });
});

describe('a gateway that does not answer', () => {
  it('takes the buyer to the order, whose unit is held until the gateway proves it never saw it, then given back', async () => {
    // An API deployment whose gateway is on another server, unreachable now (nothing listens there).
    const closed = await freePort();
    const config = loadConfig({
      PUBLIC_URL: TEST_PUBLIC_URL,
      CHECKOUT_URL: 'http://checkout.kopek.test',
      GATEWAY_URL: `http://127.0.0.1:${closed}`,
      GATEWAY_TOKEN: 'f'.repeat(64),
      KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    });
    const app = await buildApp({ ...h.app.services, config });
    await app.ready();
    try {
      const away = { ...h, app };
      const product = await makeProduct(h, shop, { quantity: 1, infinite: false });
      const path = pathOf(product.pay_url);
      const paid = await payOnce(away, path);
      expect(paid.status, paid.html).toBe(303);
      // The order's own page, which asks the gateway again: unavailable while it is, and reloadable.
      const result = await getPage(away, pathOf(paid.location as string));
      expect(result.status).toBe(503);
      expect(result.html).toContain('Temporarily unavailable');
      expect(await quantityOf(h, product.id)).toBe(0);
      const orders = await h.db.query<{ state: string }>(
        'SELECT state FROM product_orders WHERE product_id = $1',
        [product.id],
      );
      expect(orders).toEqual([{ state: 'waiting' }]);

      // The gateway answers again: it never saw the order, and after the grace period the order is
      // given up and its unit given back.
      await withClock(h, 11 * 60_000, async () => {
        const again = await getPage(h, pathOf(paid.location as string));
        expect(again.status).toBe(200);
        expect(await quantityOf(h, product.id)).toBe(1);
      });
      expect(await transactionsOfProduct(h, product.id)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
