import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, harness, newShop } from '../harness.js';

let api: Client;

beforeAll(async () => {
  const h = await harness();
  api = client(h, await newShop(h));
});

const valid = { email: 'jane@example.com', ip: '203.0.113.7' };

describe('customers: validation', () => {
  it('requires ip', async () => {
    const res = await api.post('/customers', { email: 'jane@example.com' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: "Ip can't be blank", errors: { ip: ["can't be blank"] } });
  });

  it('requires email', async () => {
    const res = await api.post('/customers', { ip: '203.0.113.7' });
    expect(res.body).toEqual({ message: "Email can't be blank", errors: { email: ["can't be blank"] } });
  });

  it('reports every broken rule at once and joins them into one sentence', async () => {
    const res = await api.post('/customers', {});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: "Email can't be blank and Ip can't be blank",
      errors: { email: ["can't be blank"], ip: ["can't be blank"] },
    });
  });

  it('treats a missing body like an empty object', async () => {
    const h = await harness();
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: (await newShop(h)).auth },
    });
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body).errors).toEqual({ email: ["can't be blank"], ip: ["can't be blank"] });
  });

  it.each(['jane', 'jane@', '@example.com', 'jane@example', 'ja ne@example.com'])(
    'rejects email %s',
    async (email) => {
      const res = await api.post('/customers', { ...valid, email });
      expect(res.body).toEqual({ message: 'Email is invalid', errors: { email: ['is invalid'] } });
    },
  );

  it.each(['300.1.1.1', 'localhost', '1.2.3', '::g'])('rejects ip %s', async (ip) => {
    const res = await api.post('/customers', { ...valid, ip });
    expect(res.body).toEqual({ message: 'Ip is invalid', errors: { ip: ['is invalid'] } });
  });

  // Any case is taken (`us` is US, test/fidelity/addresses.test.ts); an unknown code in any case is not.
  it.each(['USA', 'xx', 'XX', 'U'])('rejects country %s (ISO 3166-1 alpha-2)', async (country) => {
    const res = await api.post('/customers', { ...valid, country });
    expect(res.status).toBe(422);
    expect(res.body.errors.country).toBeDefined();
  });

  it.each(['1234', '123456', '12345-67', 'ABCDE'])('rejects US zip %s', async (zip) => {
    const res = await api.post('/customers', { ...valid, country: 'US', zip });
    expect(res.body).toEqual({
      message: 'Zip must be NNNNN or NNNNN-NNNN for the US',
      errors: { zip: ['must be NNNNN or NNNNN-NNNN for the US'] },
    });
  });

  it('rejects a state outside US and CA', async () => {
    const res = await api.post('/customers', { ...valid, country: 'DE', state: 'BY' });
    expect(res.body).toEqual({
      message: 'State is allowed only when country is US or CA',
      errors: { state: ['is allowed only when country is US or CA'] },
    });
  });

  it('rejects a state without a country', async () => {
    const res = await api.post('/customers', { ...valid, state: 'NY' });
    expect(res.body.errors).toEqual({ state: ['is allowed only when country is US or CA'] });
  });

  it('rejects a state that is not two letters', async () => {
    const res = await api.post('/customers', { ...valid, country: 'US', state: 'NYC' });
    expect(res.body.errors.state).toBeDefined();
  });

  it('rejects fields of the wrong type', async () => {
    const res = await api.post('/customers', { ...valid, first_name: 12, email: ['x'] });
    expect(res.body.errors).toEqual({ first_name: ['must be a string'], email: ['must be a string'] });
  });

  it('rejects a body that is not an object', async () => {
    const res = await api.post('/customers', '[1,2]');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ base: ['Request body must be a JSON object'] });
  });

  it('answers 404 for an unknown customer', async () => {
    const res = await api.get('/customers/cst_doesnotexist');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
  });

  it.each(['0', '101', 'abc', '-1'])('rejects limit=%s', async (limit) => {
    const res = await api.get(`/customers?limit=${limit}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ limit: ['must be a whole number from 1 to 100'] });
  });

  it('rejects an unknown starting_after cursor', async () => {
    const res = await api.get('/customers?starting_after=cst_unknown');
    expect(res.status).toBe(422);
    expect(res.body.errors.starting_after).toBeDefined();
  });
});
