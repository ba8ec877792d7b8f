import { Writable } from 'node:stream';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/http/logger.js';
import { sharedStoreUrl } from '../fresh-store.js';
import { type Harness, harness, newShop, TEST_METRICS_TOKEN, type TestShop } from '../harness.js';

let h: Harness;
let shop: TestShop;
const scrape = () =>
  h.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` },
  });

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
});

describe('operations endpoints', () => {
  it('GET /health answers 200 with the store kind, without credentials', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', store: h.db.kind });
  });

  it('GET /ready answers 200 with the store kind once the store answers, without credentials', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', store: h.db.kind });
  });

  // The embedded store runs one statement at a time on the process's thread: a liveness check that
  // asked it waited behind a shop's slow list (4 s). It asks nothing of the store and is answered
  // between statements; readiness asks the store, so it waits its turn.
  it.skipIf(sharedStoreUrl() !== undefined)(
    'GET /health does not wait behind the embedded store’s queue',
    async () => {
      let drained = false;
      const queue = Promise.all(Array.from({ length: 40 }, () => h.db.query('SELECT pg_sleep(0.025)'))).then(
        () => {
          drained = true;
        },
      );
      const health = await h.app.inject({ method: 'GET', url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(drained).toBe(false);
      const ready = await h.app.inject({ method: 'GET', url: '/ready' });
      expect(ready.statusCode).toBe(200);
      expect(drained).toBe(true);
      await queue;
    },
  );

  it('GET /docs/json is an OpenAPI document listing the customer routes', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toBe('Kopek API');
    expect(doc.servers).toEqual([{ url: h.config.publicUrl }]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/customers', '/customers/{id}']));
    expect(Object.keys(doc.paths['/customers'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(doc.components.securitySchemes.basic).toEqual({ type: 'http', scheme: 'basic' });
    // Operational routes are not part of the API document.
    expect(Object.keys(doc.paths)).not.toContain('/health');
    expect(Object.keys(doc.paths)).not.toContain('/ready');
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('GET /docs answers an HTML page (directly or by a redirect), without credentials', async () => {
    let res = await h.app.inject({ method: 'GET', url: '/docs' });
    if (res.statusCode >= 300 && res.statusCode < 400) {
      const location = String(res.headers.location);
      res = await h.app.inject({ method: 'GET', url: new URL(location, 'http://x/docs').pathname });
    }
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
    expect(res.body).toMatch(/swagger/i);
  });

  it('GET /metrics is Prometheus text with request counts by route', async () => {
    const listed = await h.app.inject({
      method: 'GET',
      url: '/customers',
      headers: { authorization: shop.auth },
    });
    expect(listed.statusCode).toBe(200);
    const res = await scrape();
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE kopek_http_requests_total counter');
    expect(res.body).toMatch(
      /kopek_http_requests_total\{method="GET",route="\/customers",status="200"\} \d+/,
    );
    expect(res.body).toContain('kopek_http_request_duration_seconds_bucket');
    expect(res.body).toContain('process_cpu_user_seconds_total');
  });

  it('counts every answer of a route and status, and times each', async () => {
    const series = 'method="GET",route="/customers/:id",status="404"';
    const read = async () => {
      const body = (await scrape()).body;
      const value = (name: string) =>
        Number(new RegExp(`^${name}\\{${series}\\} (\\d+)$`, 'm').exec(body)?.[1] ?? 0);
      return {
        total: value('kopek_http_requests_total'),
        timed: value('kopek_http_request_duration_seconds_count'),
      };
    };
    const before = await read();
    for (let i = 0; i < 3; i++) {
      const res = await h.app.inject({
        method: 'GET',
        url: '/customers/cst_000000000000000000000000',
        headers: { authorization: shop.auth },
      });
      expect(res.statusCode).toBe(404);
    }
    expect(await read()).toEqual({ total: before.total + 3, timed: before.timed + 3 });
  });

  it('counts unknown paths under one label, so random URLs cannot blow up the series', async () => {
    await h.app.inject({ method: 'GET', url: `/random/${Math.random()}` });
    const res = await scrape();
    expect(res.body).toMatch(/kopek_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(res.body).not.toMatch(/route="\/random/);
  });
});

describe('log redaction', () => {
  const CARD = '4200000000000000';

  it('never writes the secret key or card data of a request to the log', async () => {
    const before = h.logs.length;
    const res = await h.app.inject({
      method: 'POST',
      url: '/customers',
      headers: {
        authorization: shop.auth,
        'content-type': 'application/json',
        'x-request-id': 'redaction-1',
      },
      payload: JSON.stringify({
        email: 'jane@example.com',
        ip: '203.0.113.7',
        card: { number: CARD, verification_value: '123' },
      }),
    });
    expect(res.statusCode).toBe(201);
    const lines = h.logs.slice(before);
    // The request was logged at all (otherwise the absence below would prove nothing).
    expect(lines.some((l) => l.includes('redaction-1'))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(CARD);
      expect(line).not.toContain(shop.secret);
      expect(line).not.toContain(shop.auth.slice('Basic '.length));
    }
  });

  it.each([
    ['a card', { card: { number: CARD, verification_value: '123' } }],
    ['a gateway request', { request: { credit_card: { number: CARD, verification_value: '123' } } }],
    ['a nested card', { customer: { card: { number: CARD, cvc: '123' } } }],
    ['credentials', { headers: { authorization: `Basic ${Buffer.from('1:sekret123').toString('base64')}` } }],
    ['a shop secret', { shop: { secret: 'sekret123', secret_key: 'sekret123' } }],
    ['a proof document', { request: { document: { content: 'JVBERi0xLjQK-sekret123' } } }],
  ])('blanks out %s logged through the app logger', (_what, obj) => {
    const before = h.logs.length;
    h.app.log.info(obj, 'something happened');
    const lines = h.logs.slice(before);
    expect(lines).toHaveLength(1);
    const line = lines[0] as string;
    expect(line).toContain('[redacted]');
    expect(line).not.toContain(CARD);
    expect(line).not.toContain('"123"');
    expect(line).not.toContain('sekret123');
    expect(line).not.toContain(Buffer.from('1:sekret123').toString('base64'));
  });

  it('uses the same redaction for the logger a served app builds for itself', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const options = loggerOptions('info');
    expect(typeof options).toBe('object');
    const log = pino(options as pino.LoggerOptions, sink);
    log.info({ card: { number: CARD } }, 'card seen');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(CARD);
    expect(JSON.parse(lines[0] as string).card.number).toBe('[redacted]');
  });
});
