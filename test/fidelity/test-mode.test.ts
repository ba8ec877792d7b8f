import { beforeAll, describe, expect, it } from 'vitest';
import { signedIn } from '../cabinet/session.js';
import { client, type Harness, harness, newShop } from '../harness.js';

/**
 * A test shop takes no real money, so everything it makes says so: its products, plans,
 * subscriptions' plans, checkouts and payments answer `test: true` in the API, whatever was sent,
 * and the cabinet shows its products as test ones. A live shop decides per product or plan.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const product = { name: 'Course', description: 'A thing', currency: 'EUR', amount: 1999 };
const plan = { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } };
const card = {
  number: '4200000000000000',
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
};
const customer = { email: 'jane@example.com', ip: '203.0.113.7' };

describe("a test shop's resources", () => {
  it('are test products, even when sent as live or updated to live', async () => {
    const api = client(h, await newShop(h));
    const plain = await api.post('/products', product);
    expect(plain.status, plain.text).toBe(201);
    expect(plain.body.test).toBe(true);
    const live = await api.post('/products', { ...product, test: false });
    expect(live.body.test).toBe(true);
    const put = await api.send('PUT', `/products/${live.body.id}`, { test: false });
    expect(put.status, put.text).toBe(204);
    expect((await api.get(`/products/${live.body.id}`)).body.test).toBe(true);
  });

  it('are test plans, and a subscription and its payment say test', async () => {
    const api = client(h, await newShop(h));
    const made = await api.post('/plans', { ...plan, test: false });
    expect(made.status, made.text).toBe(201);
    expect(made.body.test).toBe(true);
    const sub = await api.post('/subscriptions', { plan, customer, card });
    expect(sub.status, sub.text).toBe(201);
    expect(sub.body.plan.test).toBe(true);
    const uid = sub.body.last_transaction.uid as string;
    const payment = await api.get(`/transactions/${uid}`);
    expect(payment.status, payment.text).toBe(200);
    expect(payment.body.transaction.test).toBe(true);
  });

  it('show as test products in the cabinet, not as live ones', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const made = await api.post('/products', product);
    const page = await (await signedIn(h, shop)).get(`/cabinet/products/${made.body.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Test: no real money');
    expect(page.body).not.toMatch(/>Live</);
  });
});

describe("a live shop's resources", () => {
  it('are live unless sent as test', async () => {
    const api = client(h, await newShop(h, { test: false }));
    expect((await api.post('/products', product)).body.test).toBe(false);
    expect((await api.post('/products', { ...product, test: true })).body.test).toBe(true);
    expect((await api.post('/plans', plan)).body.test).toBe(false);
    expect((await api.post('/plans', { ...plan, test: true })).body.test).toBe(true);
  });
});
