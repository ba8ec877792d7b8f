import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { ApiError, ErrorCollector, sentence } from '../../src/core/errors.js';
import { pinoOptions } from '../../src/http/logger.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';

describe('sentence()', () => {
  it('uses a single message as it is, with the field as subject', () => {
    expect(sentence({ ip: ["can't be blank"] })).toBe("Ip can't be blank");
  });

  it('joins two messages with "and"', () => {
    expect(sentence({ email: ['is invalid'], ip: ["can't be blank"] })).toBe(
      "Email is invalid and Ip can't be blank",
    );
  });

  it('joins three messages with commas', () => {
    expect(sentence({ email: ['is invalid'], ip: ["can't be blank"], zip: ['is too long'] })).toBe(
      "Email is invalid, Ip can't be blank, and Zip is too long",
    );
  });

  it('joins two messages of one field', () => {
    expect(sentence({ amount: ['is not a number', 'must be greater than 0'] })).toBe(
      'Amount is not a number and Amount must be greater than 0',
    );
  });

  it('lets base messages stand alone, capitalised', () => {
    expect(sentence({ base: ['record not found'] })).toBe('Record not found');
    expect(sentence({ base: ['Something went wrong'], ip: ["can't be blank"] })).toBe(
      "Something went wrong and Ip can't be blank",
    );
  });

  it('lets a nested base stand alone too', () => {
    expect(sentence({ plan: { base: ["plan with this ID doesn't exist for this account"] } })).toBe(
      "Plan with this ID doesn't exist for this account",
    );
  });

  it('names a nested field by its path', () => {
    expect(sentence({ plan: { currency: ['is invalid'] } })).toBe('Plan currency is invalid');
    expect(sentence({ plan: { plan: { interval_unit: ['is not included in the list'] } } })).toBe(
      'Plan plan interval unit is not included in the list',
    );
  });

  it('says something for an empty tree', () => {
    expect(sentence({})).toBe('Invalid request');
  });
});

describe('ErrorCollector', () => {
  it('is empty and throws nothing when nothing was added', () => {
    const c = new ErrorCollector();
    expect(c.empty).toBe(true);
    expect(() => c.throwIfAny()).not.toThrow();
  });

  it('collects field, base and nested messages into one tree', () => {
    const c = new ErrorCollector();
    c.add('email', 'is invalid');
    c.add('email', 'is invalid');
    c.add('email', 'is too long (maximum is 254 characters)');
    c.add(['plan', 'currency'], 'is invalid');
    c.add(['plan', 'base'], 'plan is archived');
    c.add('base', 'shop is closed');
    expect(c.has('email')).toBe(true);
    expect(c.has('ip')).toBe(false);
    expect(c.tree).toEqual({
      email: ['is invalid', 'is too long (maximum is 254 characters)'],
      plan: { currency: ['is invalid'], base: ['plan is archived'] },
      base: ['shop is closed'],
    });
  });

  it('throws one 422 ApiError with every message joined into one sentence', () => {
    const c = new ErrorCollector();
    c.add('email', 'is invalid');
    c.add(['plan', 'currency'], 'is invalid');
    c.add('ip', "can't be blank");
    let thrown: unknown;
    try {
      c.throwIfAny();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    const err = thrown as ApiError;
    expect(err.status).toBe(422);
    expect(err.toBody()).toEqual({
      message: "Email is invalid, Plan currency is invalid, and Ip can't be blank",
      errors: { email: ['is invalid'], plan: { currency: ['is invalid'] }, ip: ["can't be blank"] },
    });
  });
});

interface Reply {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** The framework-level answers all share one shape: JSON, `{message, errors:{base:[one]}}`, a request id. */
function expectContractError(res: Reply, status: number): { message: string; errors: { base: string[] } } {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  expect(res.body).not.toMatch(/<html|<!doctype/i);
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  const body = JSON.parse(res.body);
  expect(Object.keys(body).sort()).toEqual(['errors', 'message']);
  expect(Object.keys(body.errors)).toEqual(['base']);
  expect(body.errors.base).toHaveLength(1);
  expect(body.message).toBe(body.errors.base[0]);
  return body;
}

describe('error contract over HTTP', () => {
  let h: Harness;
  let shop: TestShop;

  beforeAll(async () => {
    h = await harness();
    shop = await newShop(h);
  });

  it('answers malformed JSON with 400', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: shop.auth, 'content-type': 'application/json' },
      payload: '{"email": "jane@example.com", ',
    });
    const body = expectContractError(res, 400);
    expect(body.message).toMatch(/JSON/);
  });

  it('answers an empty body declared as JSON with 400', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: shop.auth, 'content-type': 'application/json', 'content-length': '0' },
      payload: '',
    });
    const body = expectContractError(res, 400);
    expect(body.message).toMatch(/empty/);
  });

  it.each([
    ['text/plain', 'email=jane@example.com'],
    ['application/x-www-form-urlencoded', 'email=jane%40example.com&ip=203.0.113.7'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n--x--'],
  ])('answers content type %s with 415', async (type, payload) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: shop.auth, 'content-type': type },
      payload,
    });
    const body = expectContractError(res, 415);
    expect(body.message).toMatch(/application\/json/);
  });

  it('answers a body beyond BODY_LIMIT with 413', async () => {
    const config = loadConfig({
      BODY_LIMIT: '2048',
      PUBLIC_URL: h.config.publicUrl,
      KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
      LOG_LEVEL: 'silent',
    });
    expect(config.bodyLimit).toBe(2048);
    const small = await buildApp({
      config,
      db: h.db,
      clock: h.clock,
      masterKey: h.masterKey,
      log: pino({ level: 'silent' }) as FastifyBaseLogger,
    });
    try {
      await small.ready();
      const payload = JSON.stringify({
        email: 'jane@example.com',
        ip: '203.0.113.7',
        address: 'x'.repeat(4096),
      });
      const res = await small.inject({
        method: 'POST',
        url: '/customers',
        headers: { authorization: shop.auth, 'content-type': 'application/json' },
        payload,
      });
      const body = expectContractError(res, 413);
      expect(body.message).toMatch(/too large/);
      // Just under the limit still reaches the route.
      const fits = await small.inject({
        method: 'POST',
        url: '/customers',
        headers: { authorization: shop.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ email: 'jane@example.com', ip: '203.0.113.7', address: 'x'.repeat(200) }),
      });
      expect(fits.statusCode).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('answers 2 MiB to the shared app (default 1 MiB limit) with 413', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: shop.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({
        email: 'jane@example.com',
        ip: '203.0.113.7',
        address: 'x'.repeat(2 * 1024 * 1024),
      }),
    });
    expectContractError(res, 413);
  });

  it('answers an unknown route with 404, with or without credentials', async () => {
    for (const headers of [{}, { authorization: shop.auth }]) {
      const res = await h.app.inject({ method: 'GET', url: '/no/such/thing?x=1', headers });
      const body = expectContractError(res, 404);
      expect(body.message).toContain('/no/such/thing');
    }
  });

  it('answers a known path with another method with 405 and Allow', async () => {
    const res = await h.app.inject({
      method: 'DELETE',
      url: '/customers',
      headers: { authorization: shop.auth },
    });
    expectContractError(res, 405);
    const allow = String(res.headers.allow).split(/,\s*/).sort();
    expect(allow).toEqual(['GET', 'POST']);

    const one = await h.app.inject({ method: 'PATCH', url: '/customers/cst_abc' });
    expectContractError(one, 405);
    expect(String(one.headers.allow)).toBe('GET');
  });

  it('answers 401 in the same shape', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/customers' });
    expectContractError(res, 401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
  });

  it('gives every response a request id and echoes an incoming one', async () => {
    const ok = await h.app.inject({
      method: 'GET',
      url: '/customers',
      headers: { authorization: shop.auth },
    });
    expect(ok.statusCode).toBe(200);
    const health = await h.app.inject({ method: 'GET', url: '/health' });
    const ids = [ok.headers['x-request-id'], health.headers['x-request-id']];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);

    for (const url of ['/health', '/customers', '/nowhere']) {
      const echoed = await h.app.inject({ method: 'GET', url, headers: { 'x-request-id': 'trace-me-42' } });
      expect(echoed.headers['x-request-id'], url).toBe('trace-me-42');
    }
  });
});

describe('error contract: unexpected errors', () => {
  it('answers 500 with a request id and no details; the stack goes to the log only', async () => {
    const h = await harness();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = pino(pinoOptions('info'), sink);
    const app = await buildApp({
      config: h.config,
      db: h.db,
      clock: h.clock,
      masterKey: h.masterKey,
      log: logger as FastifyBaseLogger,
    });
    app.get('/boom', { config: { public: true } }, async () => {
      throw new Error('kaboom: secret internals at /srv/kopek');
    });
    try {
      await app.ready();
      const res = await app.inject({
        method: 'GET',
        url: '/boom',
        headers: { 'x-request-id': 'req-500-test' },
      });
      expect(res.statusCode).toBe(500);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
      expect(res.headers['x-request-id']).toBe('req-500-test');
      const body = JSON.parse(res.body);
      expect(body).toEqual({
        message: 'Internal error',
        errors: { base: [expect.stringContaining('req-500-test')] },
      });
      expect(res.body).not.toContain('kaboom');
      expect(res.body).not.toMatch(/\bat .*\.ts:\d+/);

      const logged = lines.map((l) => JSON.parse(l)).find((l) => l.err?.message?.includes('kaboom'));
      expect(logged).toBeDefined();
      expect(logged.reqId).toBe('req-500-test');
      expect(logged.err.stack).toContain('errors.test.ts');
    } finally {
      await app.close();
    }
  });
});

describe('error contract: bodies the store cannot keep', () => {
  let h: Harness;
  let shop: TestShop;

  beforeAll(async () => {
    h = await harness();
    shop = await newShop(h);
  });

  const post = (payload: string, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: { authorization: shop.auth, 'content-type': 'application/json', ...headers },
      payload,
    });
  const valid = { email: 'jane@example.com', ip: '203.0.113.7' };

  it('answers 422 naming the field for a NUL character (PostgreSQL text cannot hold one)', async () => {
    const res = await post(JSON.stringify({ ...valid, first_name: 'Ja\u0000ne' }));
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      message: 'First name contains invalid characters',
      errors: { first_name: ['contains invalid characters'] },
    });
  });

  it('answers 422 for an unpaired surrogate, however deep, and for a bad field name', async () => {
    const res = await post(
      `{"email":"jane@example.com","ip":"203.0.113.7","meta":{"tags":["ok","\\ud800"]}}`,
    );
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual({ meta: { tags: ['contains invalid characters'] } });

    const key = await post(`{"email":"jane@example.com","ip":"203.0.113.7","a\\u0000b":1}`);
    expect(key.statusCode).toBe(422);
    expect(key.json().errors).toEqual({
      base: ['Request body contains a field name with invalid characters'],
    });
  });

  it('keeps well-formed astral characters (a surrogate pair) as sent', async () => {
    const res = await post(JSON.stringify({ ...valid, first_name: 'Jane 🐕' }));
    expect(res.statusCode).toBe(201);
    expect(res.json().first_name).toBe('Jane 🐕');
  });

  it('answers 422 for a body nested absurdly deep, with or without an Idempotency-Key', async () => {
    const depth = 100_000;
    const deep = `{"email":"jane@example.com","ip":"203.0.113.7","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const variants: Record<string, string>[] = [{}, { 'idempotency-key': `deep-${Date.now()}` }];
    for (const headers of variants) {
      const res = await post(deep, headers);
      expect(res.statusCode).toBe(422);
      expect(res.json().errors.base).toEqual([expect.stringContaining('nested too deeply')]);
    }
    const fine = await post(JSON.stringify({ ...valid, x: [[[[{ a: [1] }]]]] }), {
      'idempotency-key': `ok-${Date.now()}`,
    });
    expect(fine.statusCode).toBe(201);
  });
});
