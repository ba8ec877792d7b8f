import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { proofBodyLimit } from '../../src/proofs/routes.js';
import {
  type Client,
  client,
  type Harness,
  harness,
  newShop,
  TEST_PUBLIC_URL,
  type TestShop,
} from '../harness.js';
import { parentPayment, pdf, png, proofBody, proofUrl, type TestFile } from './files.js';

let h: Harness;
let shop: TestShop;
let api: Client;
/** The same store and clock behind a second app whose proof documents may be at most 2048 bytes. */
let small: App;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
  const config = loadConfig({
    PUBLIC_URL: TEST_PUBLIC_URL,
    KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
    PROOF_MAX_BYTES: '2048',
  });
  const logger = pino({ level: 'silent' }) as FastifyBaseLogger;
  small = await buildApp({ config, db: h.db, clock: h.clock, masterKey: h.masterKey, log: logger });
  await small.ready();
});

afterAll(async () => {
  await small?.close();
});

/** A PDF of exactly `size` bytes: a valid header, padding in a comment, %%EOF. */
function pdfOfSize(size: number): TestFile {
  const head = '%PDF-1.4\n%';
  const tail = '\n%%EOF\n';
  const bytes = Buffer.from(head + 'x'.repeat(size - head.length - tail.length) + tail, 'latin1');
  return { bytes, type: 'application/pdf', name: 'big.pdf' };
}

async function postSmall(uid: string, body: unknown) {
  const res = await small.inject({
    method: 'POST',
    url: proofUrl(uid),
    headers: { authorization: shop.auth, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

const tooLarge = {
  message: 'Document is too large (maximum is 2048 bytes)',
  errors: { base: ['Document is too large (maximum is 2048 bytes)'] },
};

describe('payment proof: size limit', () => {
  it('accepts a document of exactly PROOF_MAX_BYTES', async () => {
    const res = await postSmall(await parentPayment(h, shop), proofBody(pdfOfSize(2048)));
    expect(res.status).toBe(200);
  });

  it('answers 413 for a document one byte larger, in the API error shape', async () => {
    const res = await postSmall(await parentPayment(h, shop), proofBody(pdfOfSize(2049)));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(tooLarge);
  });

  it('answers 413 when file_size alone announces more than the limit', async () => {
    const res = await postSmall(await parentPayment(h, shop), proofBody(pdf(), {}, { file_size: 5000 }));
    expect(res).toEqual({ status: 413, body: tooLarge });
  });

  it('answers 413 for a body beyond the route limit before reading it', async () => {
    const limit = proofBodyLimit(2048);
    const body = proofBody(pdf(), { transaction_reference: 'r'.repeat(limit) });
    const res = await postSmall(await parentPayment(h, shop), body);
    expect(res).toEqual({
      status: 413,
      body: { message: 'Request body is too large', errors: { base: ['Request body is too large'] } },
    });
  });

  it('raises the body limit for the proof route only', async () => {
    // 1.5 MiB of document: over the global 1 MiB body limit, under the default 10 MiB proof limit.
    expect(h.config.bodyLimit).toBe(1024 * 1024);
    const big = pdfOfSize(1536 * 1024);
    const proof = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(big));
    expect(proof.status).toBe(200);
    const download = await api.get(`/alt/transactions/${proof.body.transaction.parent_uid}/proof/document`);
    expect(download.text.length).toBe(big.bytes.length);
    const other = await api.post('/customers', {
      email: 'a@example.com',
      ip: '203.0.113.1',
      x: 'y'.repeat(1536 * 1024),
    });
    expect(other.status).toBe(413);
  });
});

const duplicate = {
  base: [
    'A proof for this transaction was received less than 30 seconds ago; send skip_duplicate_check true to submit another one',
  ],
};

describe('payment proof: duplicate window', () => {
  it('refuses a second proof for one uid within 30 seconds and accepts it after', async () => {
    const parent = await parentPayment(h, shop);
    const start = h.clock.now();
    try {
      expect((await api.post(proofUrl(parent), proofBody(pdf()))).status).toBe(200);
      h.clock.advance(29_000);
      const again = await api.post(proofUrl(parent), proofBody(png()));
      expect(again.status).toBe(422);
      expect(again.body.errors).toEqual(duplicate);
      // The alias is the same endpoint, so the same window.
      expect((await api.post(proofUrl(parent, 'beyag'), proofBody(png()))).status).toBe(422);
      h.clock.advance(2_000);
      expect((await api.post(proofUrl(parent), proofBody(png()))).status).toBe(200);
    } finally {
      h.clock.set(start);
    }
  });

  it('keeps the window per uid: a proof for another transaction is not a duplicate', async () => {
    const a = await parentPayment(h, shop);
    const b = await parentPayment(h, shop);
    expect((await api.post(proofUrl(a), proofBody(pdf()))).status).toBe(200);
    expect((await api.post(proofUrl(b), proofBody(pdf()))).status).toBe(200);
  });

  it('accepts a second proof at once with skip_duplicate_check true', async () => {
    const parent = await parentPayment(h, shop);
    expect((await api.post(proofUrl(parent), proofBody(pdf()))).status).toBe(200);
    const again = await api.post(proofUrl(parent), proofBody(pdf(), { skip_duplicate_check: true }));
    expect(again.status).toBe(200);
    expect((await api.post(proofUrl(parent), proofBody(pdf(), { skip_duplicate_check: false }))).status).toBe(
      422,
    );
  });

  it('accepts exactly one of five simultaneous proofs for one uid', async () => {
    const parent = await parentPayment(h, shop);
    const body = proofBody(pdf('simultaneous'));
    const results = await Promise.all(Array.from({ length: 5 }, () => api.post(proofUrl(parent), body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 422, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.errors).toEqual(duplicate);
    const rows = await h.db.query('SELECT uid FROM proofs WHERE parent_uid = $1', [parent]);
    expect(rows).toHaveLength(1);
  });
});
