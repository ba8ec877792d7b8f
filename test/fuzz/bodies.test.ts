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

/**
 * Dates at the edges of the one reading of dates (src/calendar/iso-instant.ts): years 0, 9999,
 * 10000 and negative ones, days the calendar has not, offsets of ±14:00 and beyond.
 */
const EDGE_DATES = [
  '2030-01-31',
  '2030-02-30T10:00:00+03:00',
  '2030-02-30',
  '2028-02-29T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31',
  '9999-12-31T23:59:59+14:00',
  '9999-12-31T23:59:59-14:00',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '+275760-09-14T00:00:00Z',
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+14:00',
  '0001-01-01T00:00:00-14:00',
  '-000001-01-01T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '2030-01-01T00:00:00+14:00',
  '2030-01-01T00:00:00-14:00',
  '2030-01-01T00:00:00+1400',
  '2030-01-01T00:00:00+14:01',
  '2030-01-01T00:00:00-23:59',
  '2030-01-01T00:00:00+24:00',
  '2030-12-31T00:21:46+0300',
  '2030-01-01T24:00:00Z',
  '2030-01-01T23:59:60Z',
  '2030-01-01T00:00:00.123456789Z',
  '2030-01-01T00:00:00',
  '2030-01-01T00:00',
  '2020-01-01T00:00:00Z',
];

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
    ...EDGE_DATES,
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

/** A gateway-shaped answer (`{"response": {message, errors}}`), or the contract's plain one. */
function expectAnyErrorShape(res: Sent, what: string): void {
  expect(res.status, `${what} -> ${res.status} ${res.text.slice(0, 500)}`).toBeLessThan(500);
  if (res.status >= 400) {
    const body = res.body?.response ?? res.body;
    expect(body, `${what} -> ${res.text.slice(0, 500)}`).toMatchObject({
      message: expect.any(String),
      errors: expect.any(Object),
    });
  }
}

const card = {
  number: '4200000000000000',
  verification_value: '123',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2035',
};

/** Every date field of every route, with a body valid but for it. */
const DATE_FIELDS: [string, (api: Client, date: string) => Promise<Sent>][] = [
  ['POST /products expired_at', (a, d) => a.post('/products', { ...validProduct, expired_at: d })],
  ['PUT /products/:id expired_at', (a, d) => a.put(`/products/${productId}`, { expired_at: d })],
  [
    'POST /ctp/api/checkouts order.expired_at',
    (a, d) =>
      a.post('/ctp/api/checkouts', {
        checkout: {
          transaction_type: 'payment',
          order: { amount: 100, currency: 'USD', description: 'Fuzz', expired_at: d },
        },
      }),
  ],
  [
    'POST /ctp/api/checkouts customer.birth_date',
    (a, d) =>
      a.post('/ctp/api/checkouts', {
        checkout: {
          transaction_type: 'payment',
          order: { amount: 100, currency: 'USD', description: 'Fuzz' },
          customer: { birth_date: d },
        },
      }),
  ],
  [
    'POST /transactions/payments customer.birth_date',
    (a, d) =>
      a.post('/transactions/payments', {
        request: {
          amount: 100,
          currency: 'USD',
          description: 'Fuzz',
          credit_card: card,
          duplicate_check: false,
          customer: { ip: '203.0.113.7', email: 'jane@example.com', birth_date: d },
        },
      }),
  ],
];

describe('fuzz: every date field at the edges of the calendar never causes a 5xx', {
  timeout: 180_000,
}, () => {
  for (const [name, send] of DATE_FIELDS)
    it(name, async () => {
      for (const date of EDGE_DATES) expectAnyErrorShape(await send(api, date), `${name} ${date}`);
    });

  it('POST /test_clock/advance to', async () => {
    // A shop of its own: a valid date moves its clock, to the year 9999 at most.
    const own = client(h, await newShop(h));
    for (const date of EDGE_DATES)
      expectClientAnswer(await own.post('/test_clock/advance', { to: date }), `advance to ${date}`);
  });
});
