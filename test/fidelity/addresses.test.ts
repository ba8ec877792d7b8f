import { beforeAll, describe, expect, it } from 'vitest';
import { goodCard, openPage, postForm } from '../checkout/forms.js';
import { cardFields, makeProduct, pathOf, payOnce } from '../checkout/product/helpers.js';
import { charge } from '../gateway/helpers.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';

/**
 * One set of address rules (docs/api-decisions.md#addresses) wherever an address is taken: a
 * country in any case, kept in upper case; for the US and Canada a state that is a real
 * subdivision; the same on the hosted pages as in the API.
 */

let h: Harness;
let shop: TestShop;
let api: Client;
beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const customer = { email: 'jane@example.com', ip: '203.0.113.7' };
const US_STATE = 'must be the code of a US state, DC or territory, such as NY';
const CA_PROVINCE = 'must be the code of a Canadian province or territory, such as ON';

describe('the customers API', () => {
  it.each([
    [
      { country: 'us', state: 'ny', zip: '10001' },
      { country: 'US', state: 'NY', zip: '10001' },
    ],
    [
      { country: 'Us', state: 'Dc' },
      { country: 'US', state: 'DC' },
    ],
    [
      { country: 'US', state: 'PR' },
      { country: 'US', state: 'PR' },
    ],
    [
      { country: 'US', state: 'AE' },
      { country: 'US', state: 'AE' },
    ],
    [
      { country: 'ca', state: 'on' },
      { country: 'CA', state: 'ON' },
    ],
    [
      { country: 'CA', state: 'NU' },
      { country: 'CA', state: 'NU' },
    ],
    [{ country: 'de' }, { country: 'DE', state: null }],
  ])('takes %j in any case and keeps it in upper case', async (given, kept) => {
    const res = await api.post('/customers', { ...customer, ...given });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject(kept);
    expect((await api.get(`/customers/${res.body.id}`)).body).toMatchObject(kept);
  });

  it.each([
    ['US', 'ZZ', US_STATE],
    ['us', 'ON', US_STATE],
    ['US', 'UM', US_STATE],
    ['CA', 'ZZ', CA_PROVINCE],
    ['CA', 'NY', CA_PROVINCE],
  ])('refuses country %s with state %s', async (country, state, message) => {
    const res = await api.post('/customers', { ...customer, country, state });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: `State ${message}`, errors: { state: [message] } });
  });

  it('refuses an unknown country in any case', async () => {
    const res = await api.post('/customers', { ...customer, country: 'zz' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'Country is invalid', errors: { country: ['is invalid'] } });
  });

  it('applies a lower-case US country to the zip too', async () => {
    const res = await api.post('/customers', { ...customer, country: 'us', zip: '1234' });
    expect(res.body.errors).toEqual({ zip: ['must be NNNNN or NNNNN-NNNN for the US'] });
  });

  it('applies the same rules to a customer given inside a subscription', async () => {
    const bad = await api.post(
      '/subscriptions',
      cardBody({ customer: { ...customer, country: 'US', state: 'ZZ' } }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual({ customer: { state: [US_STATE] } });
    const ok = await api.post(
      '/subscriptions',
      cardBody({ customer: { ...customer, country: 'us', state: 'co' } }),
    );
    expect(ok.status, ok.text).toBe(201);
  });
});

describe("the gateway's billing_address", () => {
  it('takes a country and a state in any case, and keeps them in upper case', async () => {
    const res = await api.post('/transactions/payments', {
      request: charge({ billing_address: { country: 'us', state: 'ny', zip: '10001' } }),
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.transaction.billing_address).toMatchObject({ country: 'US', state: 'NY' });
  });

  it.each([
    ['US', 'ZZ', US_STATE],
    ['CA', 'QQ', CA_PROVINCE],
  ])('refuses country %s with state %s', async (country, state, message) => {
    const res = await api.post('/transactions/payments', {
      request: charge({ billing_address: { country, state } }),
    });
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({ billing_address: { state: [message] } });
  });
});

describe('the checkout API and its page', () => {
  const checkout = (extra: Record<string, unknown> = {}) => ({
    checkout: {
      transaction_type: 'payment',
      order: { amount: 1250, currency: 'USD', description: 'Order 42' },
      settings: { customer_fields: { visible: ['email', 'country', 'state'], read_only: [] } },
      ...extra,
    },
  });

  it("refuses a customer's state that is not a subdivision, and keeps the country in upper case", async () => {
    const bad = await api.post('/ctp/api/checkouts', checkout({ customer: { country: 'us', state: 'ZZ' } }));
    expect(bad.status).toBe(422);
    // Named as the checkout API names every customer field: customer.email, customer.state.
    expect(bad.body.response.errors).toEqual({ customer: { state: [US_STATE] } });
    const ok = await api.post('/ctp/api/checkouts', checkout({ customer: { country: 'us', state: 'tx' } }));
    expect(ok.status, ok.text).toBe(201);
    const read = await api.get(`/ctp/api/checkouts/${ok.body.checkout.token}`);
    expect(read.body.checkout.customer).toMatchObject({ country: 'US', state: 'TX' });
  });

  it('refuses the same state on the page, and charges nothing', async () => {
    const token = (await api.post('/ctp/api/checkouts', checkout())).body.checkout.token;
    const page = await openPage(h, token);
    const posted = await postForm(h, page, token, {
      ...goodCard(),
      email: 'jane@example.com',
      country: 'us',
      state: 'ZZ',
    });
    expect(posted.status).toBe(422);
    expect(posted.html).toContain(US_STATE);
    const read = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(read.gateway_response).toBeNull();
  });
});

describe('the product payment page', () => {
  it.each([
    ['US', 'ZZ'],
    ['CA', 'NY'],
  ])('refuses country %s with state %s, as the API does', async (country, state) => {
    const product = await makeProduct(h, shop, { visible_fields: ['country', 'state'] });
    const res = await payOnce(h, pathOf(product.pay_url), { ...cardFields(), country, state });
    expect(res.status).toBe(422);
    expect(res.html).toContain('Enter the two-letter code of the state or province');
  });

  it('takes a real state', async () => {
    const product = await makeProduct(h, shop, { visible_fields: ['country', 'state'] });
    const res = await payOnce(h, pathOf(product.pay_url), { ...cardFields(), country: 'CA', state: 'qc' });
    expect(res.status, res.html.slice(0, 300)).toBeLessThan(400);
  });
});
