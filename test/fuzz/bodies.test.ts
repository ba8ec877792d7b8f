import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type Sent } from '../harness.js';

/**
 * Whatever a client sends, the answer is never a 5xx: a broken body is the client's mistake and is
 * told so in the contract's `{message, errors}` shape.
 */

// FUZZ_RUNS raises the count for a longer hunt; 200 per property keeps the suite quick.
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

let h: Harness;
let api: Client;
/** An existing product to update; a made-up id while /products does not exist yet (404 is < 500 too). */
let productId = 'prd_fuzzplaceholder';

const CUSTOMER_FIELDS = [
  'first_name',
  'last_name',
  'address',
  'city',
  'country',
  'zip',
  'state',
  'phone',
  'email',
  'ip',
];
const PRODUCT_FIELDS = [
  'name',
  'description',
  'currency',
  'amount',
  'quantity',
  'infinite',
  'visible_fields',
  'visible',
  'test',
  'immortal',
  'expired_at',
  'return_url',
  'shop_id',
  'language',
  'transaction_type',
  'additional_data',
  'success_url',
  'fail_url',
  'notification_url',
];

const validCustomer = { email: 'jane@example.com', ip: '203.0.113.7' };
const validProduct = { name: 'Fuzz', description: 'A product', currency: 'USD', amount: 100, language: 'en' };

/** Values near the edges the rules care about, plus anything at all. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    'x'.repeat(3000),
    'US',
    'CA',
    'en',
    'payment',
    'authorization',
    'USD',
    'JPY',
    'BTC',
    '100',
    '-1',
    '0',
    '1.5',
    '1e3',
    '9007199254740993',
    '99999999999999999999',
    'jane@example.com',
    '203.0.113.7',
    '::1',
    'https://shop.example.com/done',
    'javascript:alert(1)',
    '2030-01-31',
    '2030-02-30T10:00:00+03:00',
    '9999-12-31T23:59:59Z',
    '0000-01-01',
    ['email', 'phone'],
    ['nope'],
    2 ** 53,
    1e21,
    -0,
    2147483648,
    -2147483649,
    1e308,
  ),
);

function objectOf(fields: string[], base: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const picked = fc.record(Object.fromEntries(fields.map((f) => [f, anyValue])), { requiredKeys: [] });
  return fc.oneof(
    picked,
    // Valid apart from one field, so most random values get past the other rules into the store.
    fc.tuple(fc.constantFrom(...fields), anyValue).map(([field, value]) => ({ ...base, [field]: value })),
    picked.map((over) => ({ ...base, ...over })),
    fc
      .dictionary(fc.string({ unit: 'binary' }), anyValue, { maxKeys: 5 })
      .map((extra) => ({ ...base, ...extra })),
  );
}

const anyBody: (fields: string[], base: Record<string, unknown>) => fc.Arbitrary<unknown> = (fields, base) =>
  fc.oneof(fc.jsonValue(), objectOf(fields, base), objectOf(fields, base));

function expectClientAnswer(res: Sent, what: string): void {
  expect(res.status, `${what} -> ${res.status} ${res.text.slice(0, 500)}`).toBeLessThan(500);
  if (res.status >= 400) {
    expect(String(res.headers['content-type']), what).toMatch(/^application\/json/);
    expect(res.body, `${what} -> ${res.text.slice(0, 500)}`).toEqual({
      message: expect.any(String),
      errors: expect.any(Object),
    });
    expect(res.body.message.length).toBeGreaterThan(0);
  }
}

beforeAll(async () => {
  h = await harness();
  api = client(h, await newShop(h));
  const created = await api.post('/products', validProduct);
  // Products may still be a placeholder (404); once the route exists, the fixture must be created.
  if (created.status !== 404) expect(created.status, created.text).toBe(201);
  if (created.status === 201) productId = created.body.id;
});

describe('fuzz: request bodies never cause a 5xx', { timeout: 180_000 }, () => {
  it('POST /customers', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody(CUSTOMER_FIELDS, validCustomer), async (body) => {
        const res = await api.post('/customers', JSON.stringify(body));
        expectClientAnswer(res, `POST /customers ${JSON.stringify(body).slice(0, 300)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('POST /products', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody(PRODUCT_FIELDS, validProduct), async (body) => {
        const res = await api.post('/products', JSON.stringify(body));
        expectClientAnswer(res, `POST /products ${JSON.stringify(body).slice(0, 300)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('PUT /products/:id of an existing product', async () => {
    await fc.assert(
      fc.asyncProperty(anyBody(PRODUCT_FIELDS, validProduct), async (body) => {
        const res = await api.put(`/products/${productId}`, JSON.stringify(body));
        expectClientAnswer(res, `PUT /products/${productId} ${JSON.stringify(body).slice(0, 300)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('raw text that is not JSON', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (text) => {
        const res = await api.post('/customers', text);
        expectClientAnswer(res, `POST /customers raw ${JSON.stringify(text)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('any Idempotency-Key with any body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({
          unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
          maxLength: 300,
        }),
        anyBody(CUSTOMER_FIELDS, validCustomer),
        async (key, body) => {
          const res = await api.post('/customers', JSON.stringify(body), { 'idempotency-key': key });
          expectClientAnswer(
            res,
            `POST /customers key=${JSON.stringify(key)} ${JSON.stringify(body).slice(0, 300)}`,
          );
        },
      ),
      { numRuns: RUNS },
    );
  });
});
