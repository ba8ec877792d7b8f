import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop, withClock } from '../harness.js';

let h: Harness;
let me: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  me = await newShop(h);
  api = client(h, me);
});

const valid = { name: 'E-book', description: 'A PDF book', currency: 'EUR', amount: 1999 };

/** The contract's error body for one field and one message: "Expired at is invalid". */
const fieldError = (field: string, message: string) => ({
  message: `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} ${message}`,
  errors: { [field]: [message] },
});

describe('products: create validation', () => {
  it('reports every missing required field at once, joined into one sentence', async () => {
    const res = await api.post('/products', {});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message:
        "Name can't be blank, Description can't be blank, Currency can't be blank, and Amount can't be blank",
      errors: {
        name: ["can't be blank"],
        description: ["can't be blank"],
        currency: ["can't be blank"],
        amount: ["can't be blank"],
      },
    });
  });

  it.each(['name', 'description', 'currency', 'amount'])('requires %s', async (field) => {
    const body: Record<string, unknown> = { ...valid };
    delete body[field];
    const res = await api.post('/products', body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError(field, "can't be blank"));
  });

  it.each(['', '   ', null])('refuses a blank name (%j)', async (name) => {
    const res = await api.post('/products', { ...valid, name });
    expect(res.body).toEqual(fieldError('name', "can't be blank"));
  });

  it('refuses a name over 255 characters and a description over 2000', async () => {
    const ok = await api.post('/products', {
      ...valid,
      name: 'n'.repeat(255),
      description: 'd'.repeat(2000),
    });
    expect(ok.status).toBe(201);
    const res = await api.post('/products', {
      ...valid,
      name: 'n'.repeat(256),
      description: 'd'.repeat(2001),
    });
    expect(res.body).toEqual({
      message:
        'Name is too long (maximum is 255 characters) and Description is too long (maximum is 2000 characters)',
      errors: {
        name: ['is too long (maximum is 255 characters)'],
        description: ['is too long (maximum is 2000 characters)'],
      },
    });
  });

  it('refuses a name that is not a string', async () => {
    const res = await api.post('/products', { ...valid, name: 12 });
    expect(res.body).toEqual(fieldError('name', 'must be a string'));
  });

  it.each(['usd', 'US', 'XYZ', 'DOGE', 'EURO'])('refuses currency %s', async (currency) => {
    const res = await api.post('/products', { ...valid, currency });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('currency', 'is invalid'));
  });

  it.each([
    [0, 'must be greater than 0'],
    ['0', 'must be greater than 0'],
    [-5, 'must be greater than 0'],
    ['-5', 'must be greater than 0'],
    [10.5, 'must be an integer'],
    ['10.5', 'must be an integer'],
    [2 ** 53 + 2, 'is too large'],
    ['9007199254740993', 'is too large'],
    ['abc', 'is not a number'],
    ['1e3', 'is not a number'],
    [true, 'is not a number'],
  ])('refuses amount %j: %s', async (amount, message) => {
    const res = await api.post('/products', { ...valid, amount });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('amount', message));
  });

  it.each([
    [-1, 'must be greater than or equal to 0'],
    ['2.5', 'must be an integer'],
    ['many', 'is not a number'],
  ])('refuses quantity %j: %s', async (quantity, message) => {
    const res = await api.post('/products', { ...valid, quantity });
    expect(res.body).toEqual(fieldError('quantity', message));
  });

  it('requires a quantity when infinite is false', async () => {
    const res = await api.post('/products', { ...valid, infinite: false });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('quantity', "can't be blank"));
  });

  it.each(['infinite', 'test', 'immortal'])('refuses a non-boolean %s', async (field) => {
    const res = await api.post('/products', { ...valid, [field]: 'yes' });
    expect(res.body).toEqual(fieldError(field, 'must be true or false'));
  });

  it.each([[['email', 'shoe_size']], [['EMAIL']], [[1]], [[null]]])(
    'refuses visible_fields %j',
    async (visible_fields) => {
      const res = await api.post('/products', { ...valid, visible_fields });
      expect(res.body).toEqual(fieldError('visible_fields', 'is not included in the list'));
    },
  );

  it('refuses visible_fields that is not an array', async () => {
    const res = await api.post('/products', { ...valid, visible_fields: 'email' });
    expect(res.body).toEqual(fieldError('visible_fields', 'must be an array'));
  });

  it('names `visible` in the error when the shop sent `visible`', async () => {
    const res = await api.post('/products', { ...valid, visible: ['shoe_size'] });
    expect(res.body).toEqual(fieldError('visible', 'is not included in the list'));
  });

  it.each([
    '2026-02-30',
    '2027-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-1-5',
    '2026-01-01T24:00:00Z',
    '2026-01-01T10:60:00Z',
    '2026-01-01T10:00:60Z',
    '2026-01-01T10:00:00',
    '2026-01-01 10:00:00Z',
    '2026-01-01T10:00:00+2:00',
    '2026-01-01T10:00:00+02:60',
    '0000-01-01T00:00:00Z',
    '0000-01-01',
    '10000-01-01T00:00:00Z',
    '+010000-01-01T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '9999-12-31T23:59:59-14:00',
    '2030-01-01T00:00:00+14:01',
    '2030-01-01T00:00:00-15:00',
    'tomorrow',
    '01/02/2026',
  ])('refuses expired_at %s', async (expired_at) => {
    const res = await api.post('/products', { ...valid, expired_at });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('expired_at', 'is invalid'));
  });

  it.each(['xx', 'EN', 'english', 'pt'])('refuses language %s', async (language) => {
    const res = await api.post('/products', { ...valid, language });
    expect(res.body).toEqual(fieldError('language', 'is not included in the list'));
  });

  it.each(['capture', 'Payment', 'refund'])('refuses transaction_type %s', async (transaction_type) => {
    const res = await api.post('/products', { ...valid, transaction_type });
    expect(res.body).toEqual(fieldError('transaction_type', 'is not included in the list'));
  });

  it.each(['shop.example.com/back', 'ftp://shop.example.com/back', 'javascript:alert(1)', '/back'])(
    'refuses return_url %s',
    async (return_url) => {
      const res = await api.post('/products', { ...valid, return_url });
      expect(res.body).toEqual(fieldError('return_url', 'must be an absolute http(s) URL'));
    },
  );

  it("refuses another shop's id as shop_id", async () => {
    for (const shop_id of [me.shop.id + 1000, String(me.shop.id + 1000), 'abc', true]) {
      const res = await api.post('/products', { ...valid, shop_id });
      expect(res.status, String(shop_id)).toBe(422);
      expect(res.body).toEqual(fieldError('shop_id', 'is invalid'));
    }
  });

  it.each([['text'], [[1, 2]], [7]])('refuses additional_data %j', async (additional_data) => {
    const res = await api.post('/products', { ...valid, additional_data });
    expect(res.body).toEqual(fieldError('additional_data', 'must be an object'));
  });

  it('refuses a body that is not a JSON object', async () => {
    const res = await api.post('/products', '[1,2]');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Request body must be a JSON object',
      errors: { base: ['Request body must be a JSON object'] },
    });
  });
});

const malformed = { message: 'Id is invalid', errors: { id: ['is invalid'] } };
// Malformed: not `prd_` followed by letters and digits.
const MALFORMED_IDS = [
  'abc',
  'prd_',
  `cst_${'a'.repeat(24)}`,
  `PRD_${'a'.repeat(24)}`,
  `prd_${'a'.repeat(23)}-`,
  `prd_${'a'.repeat(23)}%20`,
  'prd_a_b',
];
const unknownId = `prd_${'Z'.repeat(24)}`;
// Well-formed whatever their length: ids of the platform Kopek mirrors are not Kopek's 24 characters.
const WELL_FORMED_UNKNOWN = [unknownId, 'prd_short', `prd_${'a'.repeat(25)}`, 'prd_3d7a6e4b5c'];
const notFound = { message: 'Record not found', errors: { base: ['Record not found'] } };

describe('products: read and list errors', () => {
  it.each(MALFORMED_IDS)('answers GET with malformed id %s with 302 and the error body', async (id) => {
    const res = await api.get(`/products/${id}`);
    expect(res.status).toBe(302);
    expect(res.body).toEqual(malformed);
  });

  it.each(WELL_FORMED_UNKNOWN)('answers 404 for the well-formed unknown id %s', async (id) => {
    const res = await api.get(`/products/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound);
  });

  it.each(['0', '101', 'abc', '-1'])('refuses limit=%s', async (limit) => {
    const res = await api.get(`/products?limit=${limit}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('limit', 'must be a whole number from 1 to 100'));
  });

  it('refuses an unknown starting_after cursor', async () => {
    const res = await api.get(`/products?starting_after=${unknownId}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ starting_after: ['does not name an object of this list'] });
  });
});

describe('products: update errors', () => {
  it.each(MALFORMED_IDS)('answers PUT with malformed id %s with 302 and the error body', async (id) => {
    const res = await api.put(`/products/${id}`, { amount: 5 });
    expect(res.status).toBe(302);
    expect(res.body).toEqual(malformed);
  });

  it.each(WELL_FORMED_UNKNOWN)('answers 404 for the well-formed unknown id %s', async (id) => {
    const res = await api.put(`/products/${id}`, { amount: 5 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound);
  });

  it('refuses an invalid field and leaves the stored product unchanged', async () => {
    const created = await api.post('/products', { ...valid, quantity: 3 });
    const res = await api.put(`/products/${created.body.id}`, {
      name: 'New name',
      amount: -1,
      currency: 'XXX1',
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Currency is invalid and Amount must be greater than 0',
      errors: { currency: ['is invalid'], amount: ['must be greater than 0'] },
    });
    expect((await api.get(`/products/${created.body.id}`)).body).toEqual(created.body);
  });

  it('refuses infinite false on an infinite product without a quantity', async () => {
    const created = await api.post('/products', valid);
    const res = await api.put(`/products/${created.body.id}`, { infinite: false });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(fieldError('quantity', "can't be blank"));
    expect((await api.get(`/products/${created.body.id}`)).body).toEqual(created.body);
  });

  it.each([
    ['name', ''],
    ['name', null],
    ['amount', null],
    ['currency', null],
  ])('refuses clearing the required %s with %j', async (field, value) => {
    const created = await api.post('/products', valid);
    const res = await api.put(`/products/${created.body.id}`, { [field]: value });
    expect(res.body).toEqual(fieldError(field, "can't be blank"));
  });

  it('refuses a body that is not a JSON object', async () => {
    const created = await api.post('/products', valid);
    const res = await api.put(`/products/${created.body.id}`, '"amount"');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ base: ['Request body must be a JSON object'] });
  });
});

describe('products: an expiry already past', () => {
  it.each(['2020-01-01', '2026-01-15T09:59:59Z', '2026-01-15T12:59:59+03:00'])(
    'refuses expired_at %s on create, on both stores alike',
    async (expired_at) => {
      const res = await withClock(h, '2026-01-15T10:00:00Z', () =>
        api.post('/products', { ...valid, expired_at }),
      );
      expect(res.status).toBe(422);
      expect(res.body).toEqual(fieldError('expired_at', 'must be in the future'));
    },
  );

  it('refuses a new expiry already past on update, and keeps a stored one that has passed since', async () => {
    const created = await withClock(h, '2026-01-15T10:00:00Z', () =>
      api.post('/products', { ...valid, expired_at: '2026-01-16T00:00:00Z' }),
    );
    expect(created.status).toBe(201);
    await withClock(h, '2026-02-01T00:00:00Z', async () => {
      const past = await api.put(`/products/${created.body.id}`, { expired_at: '2026-01-20T00:00:00Z' });
      expect(past.status).toBe(422);
      expect(past.body).toEqual(fieldError('expired_at', 'must be in the future'));
      // The whole product sent back, with its own (passed) expiry: the other fields still change.
      const renamed = await api.put(`/products/${created.body.id}`, {
        ...valid,
        name: 'Renamed',
        expired_at: '2026-01-16T00:00:00Z',
      });
      expect(renamed.status, renamed.text).toBe(204);
      const later = await api.put(`/products/${created.body.id}`, { expired_at: '2026-03-01T00:00:00Z' });
      expect(later.status, later.text).toBe(204);
    });
  });
});
