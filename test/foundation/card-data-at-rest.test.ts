import { createHash, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/compose/app.js';
import { ctxOf } from '../../src/http/ctx.js';
import { pinoOptions } from '../../src/http/logger.js';
import { client, type Harness, harness, newShop } from '../harness.js';

/**
 * PCI DSS 3.4: a card number or CVC must not be recoverable from what Kopek stores. Every path that
 * takes a full card runs once, with an Idempotency-Key; then every value in every table is searched
 * for the number in clear and for an unkeyed hash of anything the request carried it in.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const PAN = '4200000000000000';
const card = (cvc: string) => ({
  number: PAN,
  verification_value: cvc,
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2030',
});

/** Keys sorted at every level: the other way a body may be serialised before hashing. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Every way an unkeyed hash of `text` is commonly written. */
function unkeyedHashes(text: string): string[] {
  const out: string[] = [];
  for (const algorithm of ['md5', 'sha1', 'sha256', 'sha512']) {
    const digest = createHash(algorithm).update(text).digest();
    out.push(digest.toString('hex'), digest.toString('base64'), digest.toString('base64url'));
  }
  return out;
}

/** What a request carried the card in, as text: the values alone and the body as it was sent. */
function plaintexts(method: string, path: string, body: unknown, cvc: string): string[] {
  const bodies = [JSON.stringify(body), sortedJson(body)];
  return [
    PAN,
    cvc,
    `${PAN}${cvc}`,
    ...bodies,
    ...bodies.map((b) => `${method} ${path}\n${b}`),
    ...bodies.map((b) => `${method} ${path}${b}`),
  ];
}

/** Every string stored anywhere in the store, JSON inside text columns opened up too. */
async function storedStrings(): Promise<string[]> {
  const tables = await h.db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const out: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      out.push(value);
      if (value.startsWith('{') || value.startsWith('[')) {
        try {
          walk(JSON.parse(value));
        } catch {
          // Not JSON: kept as the string it is.
        }
      }
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  for (const { name } of tables) {
    const rows = await h.db.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${name}" t`);
    for (const r of rows) walk(JSON.parse(r.row));
  }
  return out;
}

describe('card data at rest', () => {
  it('no stored value holds the card number or an unkeyed hash of a request that carried it', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const sent: { path: string; body: unknown; cvc: string }[] = [];
    const post = async (path: string, body: unknown, cvc: string) => {
      const res = await api.post(path, body, { 'idempotency-key': randomUUID() });
      expect(res.status, `${path}: ${res.text}`).toBeLessThan(300);
      sent.push({ path, body, cvc });
    };
    const charge = (cvc: string) => ({
      request: {
        amount: 1999,
        currency: 'EUR',
        description: 'Order',
        tracking_id: randomUUID(),
        credit_card: card(cvc),
      },
    });
    await post('/credit_cards', { request: { credit_card: card('301') } }, '301');
    await post('/transactions/payments', charge('302'), '302');
    await post('/transactions/authorizations', charge('303'), '303');
    await post(
      '/subscriptions',
      {
        plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
        card: card('304'),
      },
      '304',
    );

    const stored = await storedStrings();
    expect(stored.length).toBeGreaterThan(0);
    const withPan = stored.filter((s) => s.includes(PAN));
    expect(withPan).toEqual([]);
    const all = new Set(stored);
    for (const { path, body, cvc } of sent) {
      for (const text of plaintexts('POST', path, body, cvc)) {
        for (const hash of unkeyedHashes(text)) {
          expect(all.has(hash), `an unkeyed hash of a ${path} request is stored`).toBe(false);
        }
      }
    }
  });
});

describe('card data in logs', () => {
  function capture() {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, logger: pino(pinoOptions('info'), sink) };
  }

  it('logs a store error without the values of its statement', async () => {
    const { lines, logger } = capture();
    const err = await h.db.query('SELECT $1::integer AS n, $2::text AS cvc', [PAN, '987']).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    logger.error({ err }, 'a statement failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(PAN);
    // The CVC is three digits: the line's own numbers (its time, the pid, the stack's line and column
    // numbers) may hold them by chance, so they are left out of this look.
    const withoutOwnNumbers = (lines[0] as string).replace(/"time":\d+|"pid":\d+|:\d+:\d+\)/g, '');
    expect(withoutOwnNumbers).not.toContain('987');
    expect(JSON.parse(lines[0] as string).err.message).toEqual(expect.any(String));
  });

  it('logs a route that fails on the store without the statement values', async () => {
    const { lines, logger } = capture();
    const app = await buildApp({
      config: h.config,
      db: h.db,
      clock: h.clock,
      masterKey: h.masterKey,
      log: logger as FastifyBaseLogger,
    });
    app.post('/fails-on-the-store', async (request) => {
      await ctxOf(request).db.query('SELECT $1::integer AS n', [PAN]);
      return {};
    });
    try {
      await app.ready();
      const shop = await newShop(h);
      const res = await app.inject({
        method: 'POST',
        url: '/fails-on-the-store',
        headers: { authorization: shop.auth, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.statusCode).toBe(500);
    } finally {
      await app.close();
    }
    const failure = lines.find((l) => l.includes('unhandled error'));
    expect(failure).toBeDefined();
    for (const line of lines) expect(line).not.toContain(PAN);
  });
});
