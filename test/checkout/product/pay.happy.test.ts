import { beforeAll, describe, expect, it } from 'vitest';
import { client, type Harness, harness, newShop, type TestShop } from '../../harness.js';
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

/** The product payment page in-process: the page, paying, the result and its way back to the shop. */

let h: Harness;
let shop: TestShop;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h, { name: 'Tea & <Co>' });
  await client(h, shop).send('PATCH', '/shop', { return_url: 'https://shop.example/thanks' });
});

describe('the payment page', () => {
  it('shows the product, its price in its currency, the buyer fields and the card form', async () => {
    const product = await makeProduct(h, shop, {
      name: 'Kettle',
      description: 'Boils <script>alert(1)</script> water',
      currency: 'JPY',
      amount: 1500,
      test: true,
      visible_fields: ['email', 'phone', 'country', 'zip', 'birth_date', 'first_name'],
    });
    const form = await openForm(h, pathOf(product.pay_url));
    expect(form.status).toBe(200);
    expect(form.html).toContain('<html lang="en">');
    expect(form.html).toContain('<h1>Kettle</h1>');
    expect(form.html).not.toContain('<script>alert(1)');
    expect(form.html).toContain('&lt;script>alert(1)&lt;/script>');
    expect(form.html).toContain('¥1,500');
    expect(form.html).toContain('Tea &amp; &lt;Co>');
    expect(form.html).toContain('class="test-banner"');
    for (const token of [
      'email',
      'tel',
      'country',
      'postal-code',
      'bday',
      'given-name',
      'cc-number',
      'cc-csc',
    ])
      expect(form.html).toContain(`autocomplete="${token}"`);
    expect(form.csrf).not.toBe('');
    expect(form.order).toMatch(/^[0-9A-Za-z]{32}$/);
  });

  it('formats KWD with three decimals and speaks Russian for a Russian product', async () => {
    const product = await makeProduct(h, shop, { currency: 'KWD', amount: 12345, language: 'ru' });
    const page = await getPage(h, pathOf(product.pay_url));
    expect(page.html).toContain('<html lang="ru">');
    expect(page.html).toContain('12,345\u00a0KWD');
    expect(page.html).toContain('Номер карты');
  });

  it('falls back to English for a language without texts', async () => {
    const product = await makeProduct(h, shop, { language: 'de' });
    const page = await getPage(h, pathOf(product.pay_url));
    expect(page.html).toContain('<html lang="en">');
  });

  it('opens at the confirm_url too, and keeps the API route of the product as it was', async () => {
    const product = await makeProduct(h, shop);
    const page = await getPage(h, pathOf(product.confirm_url));
    expect(page.status).toBe(200);
    expect(page.html).toContain('Tea set');
    const api = await client(h, shop).get(`/products/${product.id}`);
    expect(api.status).toBe(200);
    expect(api.body.id).toBe(product.id);
    const anonymous = await client(h, undefined).get(`/products/${product.id}`);
    expect(anonymous.status).toBe(401);
  });
});

describe('paying', () => {
  it('pays, takes one unit, and continues to the shop with uid and status', async () => {
    const product = await makeProduct(h, shop, { quantity: 3, return_url: 'https://shop.example/done?x=1' });
    const paid = await payOnce(h, pathOf(product.pay_url));
    expect(paid.status, paid.html).toBe(303);
    expect(paid.location).toMatch(new RegExp(`^/products/${product.id}/pay/result\\?order=`));
    const [tx] = await transactionsOfProduct(h, product.id);
    expect(tx?.type).toBe('payment');
    expect(tx?.status).toBe('successful');
    expect(tx?.tracking_id).toBe(paid.form.order);
    expect(await quantityOf(h, product.id)).toBe(2);

    const result = await getPage(h, paid.location as string);
    expect(result.status).toBe(200);
    expect(result.html).toContain('Payment successful');
    const back = `https://shop.example/done?x=1&amp;uid=${tx?.uid}&amp;status=successful`;
    expect(result.html).toContain(`<meta http-equiv="refresh" content="3;url=${back}"`);
    expect(result.html).toContain(`href="${back}"`);
  });

  it('runs an authorization for an authorization product, and it counts as a sale', async () => {
    const product = await makeProduct(h, shop, { quantity: 1, transaction_type: 'authorization' });
    const paid = await payOnce(h, pathOf(product.confirm_url));
    expect(paid.status, paid.html).toBe(303);
    expect(paid.location).toContain(`/v2/confirm_order/${product.id}/${shop.shop.id}/result?order=`);
    const [tx] = await transactionsOfProduct(h, product.id);
    expect(tx?.type).toBe('authorization');
    expect(tx?.status).toBe('successful');
    expect(await quantityOf(h, product.id)).toBe(0);
    const result = await getPage(h, paid.location as string);
    expect(result.html).toContain('Payment authorized');
    // The shop's own return URL, as the product has none.
    expect(result.html).toContain(`https://shop.example/thanks?uid=${tx?.uid}&amp;status=successful`);
  });

  it('a declined card takes no unit and shows the decline', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.pay_url), cardFields(CARDS.declined));
    expect(paid.status).toBe(303);
    expect(await quantityOf(h, product.id)).toBe(1);
    const result = await getPage(h, paid.location as string);
    expect(result.html).toContain('Payment declined');
    expect(result.html).toContain('status=failed');
  });

  it('never charges twice for a double click or a reloaded POST', async () => {
    const product = await makeProduct(h, shop, { quantity: 5 });
    const path = pathOf(product.pay_url);
    const form = await openForm(h, path);
    const [a, b] = await Promise.all([
      submit(h, path, form, cardFields()),
      submit(h, path, form, cardFields()),
    ]);
    const again = await submit(h, path, form, cardFields());
    expect([a.status, b.status, again.status]).toEqual([303, 303, 303]);
    expect(new Set([a.location, b.location, again.location]).size).toBe(1);
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(1);
    expect(await quantityOf(h, product.id)).toBe(4);
  });

  it('ties the transaction to the product in additional_data, with fields the protocol has no place for', async () => {
    const product = await makeProduct(h, shop, {
      visible_fields: ['email', 'taxpayer_id', 'country', 'city'],
    });
    const paid = await payOnce(h, pathOf(product.pay_url), {
      ...cardFields(),
      email: 'anna@example.com',
      taxpayer_id: '7701234567',
      country: 'de',
      city: 'Berlin',
    });
    expect(paid.status, paid.html).toBe(303);
    const [tx] = await transactionsOfProduct(h, product.id);
    const answer = await client(h, shop).get(`/transactions/${tx?.uid}`);
    expect(answer.body.transaction.additional_data).toEqual({
      product_id: product.id,
      taxpayer_id: '7701234567',
    });
    expect(answer.body.transaction.customer.email).toBe('anna@example.com');
    expect(answer.body.transaction.billing_address.country).toBe('DE');
    expect(answer.body.transaction.billing_address.city).toBe('Berlin');
  });
});
