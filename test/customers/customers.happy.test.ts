import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, harness, newShop } from '../harness.js';
import { expectNewestFirstPages } from '../lists.js';

let api: Client;

beforeAll(async () => {
  const h = await harness();
  api = client(h, await newShop(h));
});

const full = {
  first_name: 'Jane',
  last_name: 'Doe',
  address: '1 Main St',
  city: 'Springfield',
  country: 'US',
  zip: '12345-6789',
  state: 'IL',
  phone: '+15555550100',
  email: 'jane@example.com',
  ip: '203.0.113.7',
};

describe('customers: happy path', () => {
  it('creates a customer and returns the fields plus id', async () => {
    const res = await api.post('/customers', full);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^cst_[0-9A-Za-z]{24}$/), ...full });
  });

  it('creates a customer with only email and ip; absent fields are null', async () => {
    const res = await api.post('/customers', { email: 'min@example.com', ip: '2001:db8::1' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      first_name: null,
      last_name: null,
      address: null,
      city: null,
      country: null,
      zip: null,
      state: null,
      phone: null,
      email: 'min@example.com',
      ip: '2001:db8::1',
    });
  });

  it('accepts a Canadian state and a non-US zip of any form', async () => {
    const res = await api.post('/customers', {
      email: 'ca@example.com',
      ip: '198.51.100.1',
      country: 'CA',
      state: 'ON',
      zip: 'K1A 0B1',
    });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('ON');
  });

  it('reads a customer back', async () => {
    const created = await api.post('/customers', full);
    const res = await api.get(`/customers/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it('lists customers newest first and pages with limit, starting_after and a Link header', async () => {
    const h = await harness();
    const own = client(h, await newShop(h));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await own.post('/customers', { email: `c${i}@example.com`, ip: '10.0.0.1' })).body.id);
    await expectNewestFirstPages(own, '/customers', ids);
  });
});
