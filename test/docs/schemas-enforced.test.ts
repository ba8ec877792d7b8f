import { beforeAll, describe, expect, it } from 'vitest';
import { charge, card as gatewayCard } from '../gateway/helpers.js';
import { type Client, client, type Harness, harness, newShop } from '../harness.js';
import { parentPayment, pdf, proofBody } from '../proofs/files.js';
import { cardBody } from '../subscriptions/helpers.js';

/**
 * The OpenAPI at /docs is the behaviour: for every route with a JSON body, every constraint the
 * document states of a body field (required, type, maxLength, minLength, pattern, not pattern,
 * format, enum, minimum, exclusiveMinimum, maximum) is broken alone, on an otherwise valid body,
 * and the answer must be a 422 in the contract's shape naming that field. The routes are read from the document,
 * so a new route has to be listed here, as checked or as pending.
 */

type Schema = Record<string, unknown>;

/** What the fixtures' paths name, made before the tests. */
interface Ctx {
  productId: string;
  uid: string;
  subscriptionId: string;
  token: string;
  /** A payment waiting for its 3-D Secure step. */
  incomplete: string;
}

interface Fixture {
  /** The path with its parameters filled in. */
  url: (ctx: Ctx) => string;
  /** A body the route accepts; each case breaks one field of it. */
  body: Record<string, unknown>;
  /** An object whose members' errors are named without its key (a transaction request). */
  unwrapped?: string;
  /** Members whose errors the contract names under another path: [the path in the body, its name]. */
  renamed?: [string[], string[]];
  /** Cases the contract answers otherwise than 422, by case name, with the status it gives. */
  otherwise?: Record<string, number>;
}

const customer = { email: 'jane@example.com', ip: '203.0.113.7', country: 'US', zip: '10001', state: 'NY' };
const product = { name: 'Book', description: 'A book', currency: 'USD', amount: 100 };
const plan = {
  title: 'Monthly',
  currency: 'USD',
  plan: { amount: 100, interval: 1, interval_unit: 'month' },
  trial: { amount: 0, interval: 7, interval_unit: 'day' },
  infinite: false,
  billing_cycles: 12,
};

/** A card number the sandbox asks a 3-D Secure challenge for. */
const CHALLENGE = '4012000000001097';

const proof = proofBody(pdf(), { skip_duplicate_check: true });

/** A charge with every member the document describes, so each member's constraints are broken too. */
const fullCharge = () => ({
  request: charge({
    language: 'en',
    return_url: 'https://shop.example/back',
    notification_url: 'https://shop.example/hook',
    customer: { ip: '203.0.113.7', email: 'jane@example.com', device_id: 'd-1', birth_date: '1990-01-31' },
    billing_address: {
      first_name: 'Jane',
      last_name: 'Doe',
      address: '1 Main St',
      country: 'US',
      city: 'New York',
      zip: '10001',
      state: 'NY',
      phone: '+1 212 555 0100',
    },
    additional_data: { order: 'A-1' },
    avs_cvc_verification: { avs_verification: { skip_verification: true, rejection_codes: ['N'] } },
  }),
});

const tokenizable = {
  number: '5555555555554444',
  verification_value: '737',
  holder: 'Jane Roe',
  exp_month: '03',
  exp_year: '2031',
};
const cardChanges = { verification_value: '737', holder: 'New Holder', exp_month: '11', exp_year: '2033' };

const checkout = {
  checkout: {
    transaction_type: 'payment',
    attempts: 2,
    test: true,
    order: {
      amount: 1250,
      currency: 'USD',
      description: 'Order #42',
      tracking_id: 'order-42',
      expired_at: '2030-01-01T00:00:00Z',
      additional_data: { note: 'gift' },
    },
    settings: {
      success_url: 'https://shop.example/ok',
      decline_url: 'https://shop.example/declined',
      fail_url: 'https://shop.example/fail',
      cancel_url: 'https://shop.example/cancel',
      notification_url: 'https://shop.example/hook',
      language: 'en',
      customer_fields: { visible: ['email', 'first_name'], read_only: ['email'] },
    },
    customer: {
      email: 'jane@example.com',
      first_name: 'Jane',
      last_name: 'Roe',
      phone: '+1 212 555 0100',
      country: 'US',
      state: 'NY',
      city: 'New York',
      address: '1 Main St',
      zip: '10001',
      birth_date: '1990-01-31',
      ip: '203.0.113.7',
    },
    payment_method: { types: ['credit_card'] },
  },
};

/** The parent transactions of the child fixtures, made before the tests (beforeAll). */
const child = (extra: Record<string, unknown>) => ({ request: { parent_uid: '', amount: 100, ...extra } });
const captureBody = child({});
const voidBody = child({});
const refundBody = child({ reason: 'Returned' });

/** Routes whose body schema is what validates them. */
const CHECKED: Record<string, Fixture> = {
  'POST /customers': { url: () => '/customers', body: customer },
  'POST /products': { url: () => '/products', body: product },
  'PUT /products/{id}': { url: ({ productId }) => `/products/${productId}`, body: product },
  'POST /plans': { url: () => '/plans', body: plan },
  'POST /subscriptions': { url: () => '/subscriptions', body: cardBody() },
  ...Object.fromEntries(
    ['payments', 'authorizations', 'credits'].map((verb) => [
      `POST /transactions/${verb}`,
      { url: () => `/transactions/${verb}`, body: fullCharge(), unwrapped: 'request' },
    ]),
  ),
  'POST /transactions/captures': {
    url: () => '/transactions/captures',
    body: captureBody,
    unwrapped: 'request',
  },
  'POST /transactions/voids': { url: () => '/transactions/voids', body: voidBody, unwrapped: 'request' },
  ...Object.fromEntries(
    ['/credit_cards', '/v2/credit_cards'].map((url) => [
      `POST ${url}`,
      { url: () => url, body: { request: tokenizable }, unwrapped: 'request' },
    ]),
  ),
  'POST /credit_cards/{token}': {
    url: ({ token }) => `/credit_cards/${token}`,
    body: { request: cardChanges },
    unwrapped: 'request',
  },
  'PUT /v2/credit_cards/{token}': {
    url: ({ token }) => `/v2/credit_cards/${token}`,
    body: { request: cardChanges },
    unwrapped: 'request',
  },
  'PATCH /shop': {
    url: () => '/shop',
    body: {
      three_d_secure: false,
      email_notifications: false,
      notification_email: 'owner@shop.example',
      return_url: 'https://shop.example/back',
      notification_auth: 'signature',
      time_zone: 'UTC',
      retry_schedule: { failed: ['P1D', 'P3D'], error: ['PT1H'] },
      quiet_hours: null,
    },
  },
  'POST /process/{uid}/return': {
    url: ({ incomplete }) => `/process/${incomplete}/return`,
    body: { outcome: 'passed', pa_res: 'eJzLSM3JyVcozy/KSQEAGgQEXQ==', md: 'md-1' },
  },
  'POST /test_clock/advance': { url: () => '/test_clock/advance', body: { by: 'PT1H' } },
  'POST /ctp/api/checkouts': {
    url: () => '/ctp/api/checkouts',
    body: checkout,
    // The platform names the checkout's customer fields customer.email, not checkout.customer.email.
    renamed: [['checkout', 'customer'], ['customer']],
  },
  'POST /transactions/refunds': {
    url: () => '/transactions/refunds',
    body: refundBody,
    unwrapped: 'request',
  },
  'POST /subscriptions/{id}/cancel': {
    url: ({ subscriptionId }) => `/subscriptions/${subscriptionId}/cancel`,
    body: { cancel_reason: 'No longer needed' },
  },
  ...Object.fromEntries(
    ['/alt', '/beyag', ''].map((area) => [
      `POST ${area}/transactions/{uid}/proof`,
      {
        url: ({ uid }) => `${area}/transactions/${uid}/proof`,
        body: proof,
        unwrapped: 'request',
        // A document announced beyond the size limit is refused as too large before anything else.
        otherwise: { 'request.document.file_size maximum 2^53': 413 },
      },
    ]),
  ),
};

/** Routes whose body is still validated by hand-written code: the list shrinks as they move over. */
const PENDING: string[] = [];

interface Case {
  name: string;
  path: string[];
  body: Record<string, unknown>;
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** The body with the value at `path` replaced (or removed when `value` is undefined). */
function withValue(base: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const body = clone(base);
  let node = body;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  const last = path.at(-1) as string;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return body;
}

/** The non-null branch of a nullable field, as @fastify/swagger writes it. */
function unwrap(schema: Schema): Schema {
  const options = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  const real = options?.filter((s) => s.type !== 'null');
  return real?.length === 1 ? (real[0] as Schema) : schema;
}

/** The value of the valid body at `path`. */
function valueAt(body: unknown, path: string[]): unknown {
  let node = body;
  for (const key of path) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

/**
 * Of a union of object shapes (an `{id}` or a new object, a card in full or by its token), the shape
 * the valid body takes: the first whose required members it has, unions within looked into alike.
 */
function shapeOf(schema: Schema, value: unknown): Schema {
  const options = ((schema.anyOf ?? schema.oneOf) as Schema[] | undefined)?.filter((s) => s.type !== 'null');
  if (!options || options.length < 2 || typeof value !== 'object' || value === null) return schema;
  for (const option of options) {
    const shape = shapeOf(option, value);
    const required = (shape.required as string[] | undefined) ?? [];
    if (shape.type === 'object' && required.every((key) => key in value)) return shape;
  }
  return schema;
}

/** A value each format refuses. */
const BROKEN_FORMAT: Record<string, string> = { 'safe-text': 'bad\u0007text' };

const nonMatching = (pattern: string) =>
  ['!', ' ', '@@@@', 'x', '0'].find((s) => !new RegExp(pattern, 'u').test(s)) as string;

/** One case per constraint the document states of each field, each on an otherwise valid body. */
function casesOf(schema: Schema, base: Record<string, unknown>, path: string[] = []): Case[] {
  const cases: Case[] = [];
  const required = (schema.required as string[] | undefined) ?? [];
  for (const [name, raw] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    const at = [...path, name];
    const field = shapeOf(unwrap(raw), valueAt(base, at));
    const add = (what: string, value: unknown) =>
      cases.push({ name: `${at.join('.')} ${what}`, path: at, body: withValue(base, at, value) });
    if (required.includes(name)) add('required', undefined);
    const type = field.type;
    if (type === 'string' || type === 'integer' || type === 'number' || type === 'object' || type === 'array')
      add(`type ${type}`, true);
    if (type === 'boolean') add('type boolean', 'yes');
    if (typeof field.maxLength === 'number') add('maxLength', 'a'.repeat(field.maxLength + 1));
    if (typeof field.minLength === 'number' && field.minLength > 0 && required.includes(name))
      add('minLength', '');
    if (typeof field.pattern === 'string') add('pattern', nonMatching(field.pattern));
    if (typeof field.format === 'string' && type === 'string')
      add(`format ${field.format}`, BROKEN_FORMAT[field.format] ?? 'not valid at all');
    const not = field.not as Schema | undefined;
    if (typeof not?.pattern === 'string') add('not pattern', 'a/b\\c');
    if (Array.isArray(field.enum)) add('enum', 'not-a-member');
    if (typeof field.minimum === 'number') add('minimum', field.minimum - 1);
    if (typeof field.exclusiveMinimum === 'number') add('exclusiveMinimum', field.exclusiveMinimum);
    if (typeof field.maximum === 'number' && field.maximum < Number.MAX_SAFE_INTEGER)
      add('maximum', field.maximum + 1);
    if (typeof field.maximum === 'number') add('maximum 2^53', 2 ** 53);
    const items = field.items as Schema | undefined;
    if (type === 'array' && items && Array.isArray(unwrap(items).enum)) add('items enum', ['not-a-member']);
    if (type === 'object' && field.properties && typeof valueAt(base, at) === 'object')
      cases.push(...casesOf(field, base, at));
  }
  return cases;
}

/** `errors` of the answer at `path`: present, and a list of texts. */
function errorsAt(errors: unknown, path: string[]): unknown {
  let node = errors;
  for (const key of path) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

let h: Harness;
let api: Client;
let productId: string;
let uid: string;
let subscriptionId: string;
let token: string;
let incomplete: string;
let openapi: { paths: Record<string, Record<string, Schema>> };

beforeAll(async () => {
  h = await harness();
  const shop = await newShop(h);
  api = client(h, shop);
  const created = await api.post('/products', product);
  expect(created.status, created.text).toBe(201);
  productId = created.body.id;
  uid = await parentPayment(h, shop);
  const subscription = await api.post('/subscriptions', cardBody());
  expect(subscription.status, subscription.text).toBe(201);
  subscriptionId = subscription.body.id;
  const parent = async (verb: string) => {
    const res = await api.post(`/transactions/${verb}`, { request: charge() });
    expect(res.status, res.text).toBe(200);
    return res.body.transaction.uid as string;
  };
  captureBody.request.parent_uid = await parent('authorizations');
  voidBody.request.parent_uid = await parent('authorizations');
  refundBody.request.parent_uid = await parent('payments');
  const card = await api.post('/credit_cards', { request: tokenizable });
  expect(card.status, card.text).toBe(200);
  token = card.body.token;
  // A payment of a card that asks for a challenge, on the shop with 3-D Secure on for it.
  expect((await api.send('PATCH', '/shop', { three_d_secure: true })).status).toBe(200);
  const challenged = await api.post('/transactions/payments', {
    request: charge({ credit_card: gatewayCard(CHALLENGE), return_url: 'https://shop.example/back' }),
  });
  expect(challenged.body.transaction?.status, challenged.text).toBe('incomplete');
  incomplete = challenged.body.transaction.uid;
  expect((await api.send('PATCH', '/shop', { three_d_secure: false })).status).toBe(200);
  const docs = await h.app.inject({ method: 'GET', url: '/docs/json' });
  expect(docs.statusCode).toBe(200);
  openapi = JSON.parse(docs.body);
});

/** Every documented operation with a JSON request body, with its body schema. */
function jsonBodies(): Map<string, Schema> {
  const found = new Map<string, Schema>();
  for (const [url, operations] of Object.entries(openapi.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const content = (operation.requestBody as Schema | undefined)?.content as
        | Record<string, Schema>
        | undefined;
      const schema = content?.['application/json']?.schema as Schema | undefined;
      if (schema) found.set(`${method.toUpperCase()} ${url}`, schema);
    }
  }
  return found;
}

describe('the OpenAPI body schemas are what validates', () => {
  it('lists every documented body as checked or pending', () => {
    const documented = [...jsonBodies().keys()].sort();
    expect(documented).toEqual([...Object.keys(CHECKED), ...PENDING].sort());
  });

  it.each(Object.keys(CHECKED))('%s accepts its valid body', async (route) => {
    const fixture = CHECKED[route] as Fixture;
    const [method] = route.split(' ') as [string];
    const res = await api.send(
      method as 'POST' | 'PUT' | 'PATCH',
      fixture.url({ productId, uid, subscriptionId, token, incomplete }),
      fixture.body,
    );
    expect(res.status, res.text).toBeLessThan(300);
  });

  it.each(Object.keys(CHECKED))('%s refuses each broken documented constraint by name', async (route) => {
    const fixture = CHECKED[route] as Fixture;
    const [method] = route.split(' ') as [string];
    const cases = casesOf(jsonBodies().get(route) as Schema, fixture.body);
    expect(cases.length).toBeGreaterThan(3);
    const failures: string[] = [];
    for (const c of cases) {
      const res = await api.send(
        method as 'POST' | 'PUT' | 'PATCH',
        fixture.url({ productId, uid, subscriptionId, token, incomplete }),
        c.body,
      );
      // The gateway's routes wrap the error body in `response`.
      const status = fixture.otherwise?.[c.name];
      if (status !== undefined) {
        if (res.status !== status) failures.push(`${c.name}: ${res.status} ${res.text.slice(0, 200)}`);
        continue;
      }
      const answer = res.body?.response ?? res.body;
      const unwrapped = fixture.unwrapped;
      let path = unwrapped && c.path.length > 1 && c.path[0] === unwrapped ? c.path.slice(1) : c.path;
      const [from, to] = fixture.renamed ?? [[], []];
      if (from.length > 0 && path.length > from.length && from.every((key, i) => path[i] === key))
        path = [...to, ...path.slice(from.length)];
      const named = errorsAt(answer?.errors, path);
      const shaped = typeof answer?.message === 'string' && answer.message.length > 0;
      if (res.status !== 422 || !shaped || !Array.isArray(named) || named.length === 0)
        failures.push(`${c.name}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});
