import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { jpeg, parentPayment, pdf, proofBody, proofUrl } from './files.js';

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const notFound = { message: 'Record not found', errors: { base: ['Record not found'] } };

describe('payment proof: who may send and read', () => {
  it('asks for credentials (401 with WWW-Authenticate) before anything else', async () => {
    const parent = await parentPayment(h, shop);
    const res = await client(h, undefined).post(proofUrl(parent), proofBody(pdf()));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(res.body.errors.base).toBeDefined();
    const wrong = client(h, {
      ...shop,
      auth: `Basic ${Buffer.from(`${shop.shop.id}:nope`).toString('base64')}`,
    });
    expect((await wrong.post(proofUrl(parent), proofBody(pdf()))).status).toBe(401);
    expect((await wrong.get(`/alt/transactions/${parent}/proof/document`)).status).toBe(401);
  });

  it.each([
    ['an unknown uid', () => randomUUID()],
    ['a malformed uid', () => 'not-a-uid'],
    ['a uid with SQL in it', () => "1' OR '1'='1"],
  ])('answers 404 for %s, on both paths', async (_case, uid) => {
    for (const area of ['alt', 'beyag']) {
      const res = await api.post(proofUrl(encodeURIComponent(uid()), area), proofBody(pdf()));
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    }
  });

  it("answers another shop's transaction exactly like an unknown one, for proof and download", async () => {
    const other = await newShop(h);
    const theirs = await parentPayment(h, other);
    expect((await client(h, other).post(proofUrl(theirs), proofBody(pdf()))).status).toBe(200);
    const res = await api.post(proofUrl(theirs), proofBody(pdf()));
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound);
    const doc = await api.get(`/alt/transactions/${theirs}/proof/document`);
    expect(doc.status).toBe(404);
    expect(doc.body).toEqual(notFound);
  });

  it('answers 404 for the document of a transaction without a proof, or a malformed uid', async () => {
    const parent = await parentPayment(h, shop);
    expect((await api.get(`/alt/transactions/${parent}/proof/document`)).body).toEqual(notFound);
    expect((await api.get('/alt/transactions/x/proof/document')).status).toBe(404);
    expect((await api.get(`/beyag/transactions/${randomUUID()}/proof/document`)).status).toBe(404);
  });

  it('refuses a proof attached to another proof', async () => {
    const sent = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(pdf()));
    const res = await api.post(proofUrl(sent.body.transaction.uid), proofBody(pdf()));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      base: ['A proof is attached to the transaction it proves, not to another proof'],
    });
  });

  it('keeps a hostile file name out of the download headers', async () => {
    const parent = await parentPayment(h, shop);
    const name = 'Quittung "März"; x=1 ü.jpg';
    expect((await api.post(proofUrl(parent), proofBody(jpeg('x', name)))).status).toBe(200);
    const res = await api.get(`/alt/transactions/${parent}/proof/document`);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="Quittung _M_rz_; x=1 _.jpg"; filename*=UTF-8''${encodeURIComponent(name)}`,
    );
  });

  it('sends the document as a sandboxed, unsniffed attachment from both areas', async () => {
    const parent = await parentPayment(h, shop);
    // A PDF may carry script: a browser that opens it must not run it in this origin.
    expect((await api.post(proofUrl(parent), proofBody(pdf()))).status).toBe(200);
    for (const area of ['/alt', '/beyag']) {
      const res = await api.get(`${area}/transactions/${parent}/proof/document`);
      expect(res.status).toBe(200);
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(String(res.headers['content-disposition'])).toMatch(
        /^attachment; filename="[^"]+"; filename\*=UTF-8''/,
      );
      expect(res.headers['cache-control']).toBe('private, no-store');
    }
  });

  it('answers errors in the API shape, never wrapped in response', async () => {
    const res = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(pdf(), { amount: 0 }));
    expect(Object.keys(res.body).sort()).toEqual(['errors', 'message']);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });
});
