import { beforeAll, describe, expect, it } from 'vitest';
import { KOPEK_CARDS } from '../../../src/gateway/test-cards.js';
import type { Harness } from '../../harness.js';
import { harness, newShop, type TestShop, withClock } from '../../harness.js';
import {
  CARDS,
  cardFields,
  getPage,
  makeProduct,
  type OpenForm,
  openForm,
  pathOf,
  payOnce,
  quantityOf,
  submit,
  transactionsOfProduct,
} from './helpers.js';

/**
 * Stock: one unit per successful payment or authorization, never below zero, never sold twice; a
 * declined, failed or abandoned attempt gives its unit back. Runs on PGlite and on PostgreSQL.
 */

let h: Harness;
let shop: TestShop;
let threeDs: TestShop;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  threeDs = await newShop(h, { threeDs: true });
});

/** The 3-D Secure page's answer, as the buyer's browser would post it. */
async function answerChallenge(redirectUrl: string, outcome: 'passed' | 'failed') {
  const form = await openForm(h, pathOf(redirectUrl));
  expect(form.status, form.html).toBe(200);
  const res = await h.app.inject({
    method: 'POST',
    url: pathOf(redirectUrl),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
    payload: new URLSearchParams({ _csrf: form.csrf, outcome }).toString(),
  });
  expect(res.statusCode, res.body).toBe(303);
  return res.headers.location as string;
}

describe('the last unit', () => {
  it('goes to exactly one of 20 buyers paying at once; the others see sold out and are not charged', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const path = pathOf(product.pay_url);
    const forms: OpenForm[] = [];
    for (let i = 0; i < 20; i++) forms.push(await openForm(h, path));
    const answers = await Promise.all(forms.map((form) => submit(h, path, form, cardFields())));
    const paid = answers.filter((a) => a.status === 303);
    const soldOut = answers.filter((a) => a.status === 410);
    expect(paid).toHaveLength(1);
    expect(soldOut).toHaveLength(19);
    for (const a of soldOut) expect(a.html).toContain('Sold out');
    const charges = await transactionsOfProduct(h, product.id);
    expect(charges.map((c) => c.status)).toEqual(['successful']);
    expect(await quantityOf(h, product.id)).toBe(0);
    expect((await getPage(h, path)).status).toBe(410);
  });

  it('never decrements unlimited stock', async () => {
    const product = await makeProduct(h, shop);
    expect((await payOnce(h, pathOf(product.pay_url))).status).toBe(303);
    expect((await payOnce(h, pathOf(product.pay_url))).status).toBe(303);
    expect(await quantityOf(h, product.id)).toBeNull();
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(2);
  });

  it('is back on sale after a declined card', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const declined = await payOnce(h, pathOf(product.pay_url), cardFields(CARDS.declined));
    expect(declined.status).toBe(303);
    expect(await quantityOf(h, product.id)).toBe(1);
    expect((await payOnce(h, pathOf(product.pay_url))).status).toBe(303);
    expect(await quantityOf(h, product.id)).toBe(0);
  });
});

describe('outcomes the acquirer leaves open or gets wrong', () => {
  it('a gateway error takes no unit and says the payment failed', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.pay_url), cardFields(KOPEK_CARDS.error));
    expect(paid.status).toBe(303);
    expect(await quantityOf(h, product.id)).toBe(1);
    const result = await getPage(h, paid.location as string);
    expect(result.html).toContain('Payment failed');
    // Neither the product nor the shop has a return address: no redirect, the buyer may try again.
    expect(result.html).not.toContain('http-equiv="refresh"');
    expect(result.html).toContain(`href="/products/${product.id}/pay">Try again`);
  });

  it('holds the unit while the acquirer has not answered, then sells it on its late answer', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.pay_url), cardFields(KOPEK_CARDS.timeout));
    expect(paid.status).toBe(303);
    expect(await quantityOf(h, product.id)).toBe(0);
    const waiting = await getPage(h, paid.location as string);
    expect(waiting.html).toContain('Payment is being processed');
    expect(waiting.html).toContain(`<meta http-equiv="refresh" content="3;url=${paid.location}"`);
    await withClock(h, 61_000, async () => {
      const result = await getPage(h, paid.location as string);
      expect(result.html).toContain('Payment successful');
    });
    expect(await quantityOf(h, product.id)).toBe(0);
    expect((await transactionsOfProduct(h, product.id)).map((t) => t.status)).toEqual(['successful']);
  });
});

describe('3-D Secure', () => {
  it('holds the unit during the challenge and sells it when the challenge is passed', async () => {
    const product = await makeProduct(h, threeDs, { quantity: 1 });
    const otherBuyer = await openForm(h, pathOf(product.pay_url));
    const paid = await payOnce(h, pathOf(product.pay_url), cardFields(CARDS.challenge));
    expect(paid.status).toBe(303);
    expect(paid.location).toMatch(/\/process\/[0-9a-f-]{36}$/);
    expect(await quantityOf(h, product.id)).toBe(0);
    // Another buyer meanwhile: sold out, not charged.
    expect((await getPage(h, pathOf(product.pay_url))).status).toBe(410);
    expect((await submit(h, pathOf(product.pay_url), otherBuyer, cardFields())).status).toBe(410);

    const back = await answerChallenge(paid.location as string, 'passed');
    expect(back).toContain(`/products/${product.id}/pay/result?order=${paid.form.order}&uid=`);
    const result = await getPage(h, pathOf(back));
    expect(result.status).toBe(200);
    expect(result.html).toContain('Payment successful');
    expect(await quantityOf(h, product.id)).toBe(0);
    expect((await transactionsOfProduct(h, product.id)).map((t) => t.status)).toEqual(['successful']);
  });

  it('gives the unit back when the challenge fails', async () => {
    const product = await makeProduct(h, threeDs, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.confirm_url), cardFields(CARDS.challenge));
    expect(await quantityOf(h, product.id)).toBe(0);
    const back = await answerChallenge(paid.location as string, 'failed');
    expect(back).toContain(`/v2/confirm_order/${product.id}/${threeDs.shop.id}/result?order=`);
    const result = await getPage(h, pathOf(back));
    expect(result.html).toContain('Payment declined');
    expect(await quantityOf(h, product.id)).toBe(1);
  });

  it('a reload of the POST while the challenge waits leads back to the challenge', async () => {
    const product = await makeProduct(h, threeDs, { quantity: 2 });
    const path = pathOf(product.pay_url);
    const form = await openForm(h, path);
    const first = await submit(h, path, form, cardFields(CARDS.challenge));
    const again = await submit(h, path, form, cardFields(CARDS.challenge));
    expect(again.location).toBe(first.location);
    expect(await transactionsOfProduct(h, product.id)).toHaveLength(1);
    expect(await quantityOf(h, product.id)).toBe(1);
  });

  it('fails a challenge abandoned for longer than the hold, and the unit goes back on sale', async () => {
    const product = await makeProduct(h, threeDs, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.pay_url), cardFields(CARDS.challenge));
    expect(await quantityOf(h, product.id)).toBe(0);
    expect((await getPage(h, pathOf(product.pay_url))).status).toBe(410);
    await withClock(h, 16 * 60_000, async () => {
      expect((await getPage(h, pathOf(product.pay_url))).status).toBe(200);
    });
    expect(await quantityOf(h, product.id)).toBe(1);
    expect((await transactionsOfProduct(h, product.id)).map((t) => t.status)).toEqual(['failed']);
    // The buyer coming back to the challenge now finds it over.
    const late = await getPage(h, pathOf(paid.location as string));
    expect(late.html).not.toContain('name="outcome"');
  });
});

describe('a crash between taking the unit and charging', () => {
  it('gives the unit back once the order has been silent for the grace period', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    // What a process stopping right after makeOrder leaves behind: an order and a unit taken, no charge.
    await h.db.query(
      `INSERT INTO product_orders (id, shop_id, product_id, state, holds_unit, created_at, updated_at)
       VALUES ($1, $2, $3, 'charging', true, $4, $4)`,
      ['C'.repeat(32), shop.shop.id, product.id, h.clock.now()],
    );
    await h.db.query('UPDATE products SET quantity = 0 WHERE id = $1', [product.id]);
    expect((await getPage(h, pathOf(product.pay_url))).status).toBe(410);
    await withClock(h, 11 * 60_000, async () => {
      expect((await getPage(h, pathOf(product.pay_url))).status).toBe(200);
    });
    expect(await quantityOf(h, product.id)).toBe(1);
  });

  it('sells the unit when the charge went through but its answer was never recorded', async () => {
    const product = await makeProduct(h, shop, { quantity: 1 });
    const paid = await payOnce(h, pathOf(product.pay_url));
    // As if the process stopped after charging: the order still says charging.
    await h.db.query(
      `UPDATE product_orders SET state = 'charging', transaction_uid = NULL, transaction_status = NULL WHERE id = $1`,
      [paid.form.order],
    );
    const result = await getPage(h, paid.location as string);
    expect(result.html).toContain('Payment successful');
    expect(await quantityOf(h, product.id)).toBe(0);
  });
});
