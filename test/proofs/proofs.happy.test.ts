import { beforeAll, describe, expect, it } from 'vitest';
import { findTransaction, historyOf } from '../../src/ledger/repository.js';
import { countDocuments } from '../../src/proofs/repository.js';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { jpeg, parentPayment, pdf, png, proofBody, proofUrl, sha256 } from './files.js';

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

describe('payment proof: accepted', () => {
  it('stores a matching PDF proof as a successful proof transaction of the parent', async () => {
    const parent = await parentPayment(h, shop, { test: false });
    const res = await api.post(proofUrl(parent), proofBody(pdf()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      transaction: {
        uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        status: 'successful',
        message: 'Proof received',
        amount: 1999,
        parent_uid: parent,
        currency: 'EUR',
        type: 'proof',
        proof: {
          message: 'Proof matches the transaction',
          ref_id: 'receipt-42',
          gateway_id: expect.any(Number),
          status: 'successful',
        },
      },
    });
    expect(Number.isInteger(res.body.transaction.proof.gateway_id)).toBe(true);
    const row = await findTransaction(h.db, shop.shop.id, res.body.transaction.uid);
    expect(row).toMatchObject({ type: 'proof', parent_uid: parent, status: 'successful', test: false });
    expect((await historyOf(h.db, res.body.transaction.uid)).map((e) => e.status)).toEqual(['successful']);
  });

  it('takes the test flag of the parent transaction', async () => {
    const parent = await parentPayment(h, shop, { test: true });
    const res = await api.post(proofUrl(parent), proofBody(pdf('test flag')));
    const row = await findTransaction(h.db, shop.shop.id, res.body.transaction.uid);
    expect(row?.test).toBe(true);
  });

  it('stores the proof but marks it failed when amount and currency differ, saying what differs', async () => {
    const parent = await parentPayment(h, shop);
    const res = await api.post(proofUrl(parent), proofBody(pdf(), { amount: 1000, currency: 'USD' }));
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({ status: 'successful', amount: 1000, currency: 'USD' });
    expect(res.body.transaction.proof).toMatchObject({
      status: 'failed',
      message: 'Amount 1000 differs from the transaction amount 1999; currency USD differs from EUR',
    });
  });

  it('names only the amount or only the currency when only that differs', async () => {
    const a = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(pdf(), { amount: 2000 }));
    expect(a.body.transaction.proof).toEqual(
      expect.objectContaining({
        status: 'failed',
        message: 'Amount 2000 differs from the transaction amount 1999',
      }),
    );
    const c = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(pdf(), { currency: 'GBP' }));
    expect(c.body.transaction.proof).toEqual(
      expect.objectContaining({ status: 'failed', message: 'Currency GBP differs from EUR' }),
    );
  });

  it('accepts PNG and JPEG documents, .jpeg and upper-case extensions too', async () => {
    for (const file of [png(), jpeg(), jpeg('x', 'scan.jpeg'), png(2, 2, 9, 'SCAN.PNG')]) {
      const res = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(file));
      expect(res.status, file.name).toBe(200);
    }
  });

  it('returns ref_id null without transaction_reference, and accepts a numeric string amount', async () => {
    const body = proofBody(pdf(), { amount: '1999' });
    delete (body.request as Record<string, unknown>).transaction_reference;
    const res = await api.post(proofUrl(await parentPayment(h, shop)), body);
    expect(res.status).toBe(200);
    expect(res.body.transaction.amount).toBe(1999);
    expect(res.body.transaction.proof).toMatchObject({ ref_id: null, status: 'successful' });
  });

  it('accepts the checksum in upper-case hex', async () => {
    const file = pdf('upper');
    const res = await api.post(
      proofUrl(await parentPayment(h, shop)),
      proofBody(file, {}, { checksum: sha256(file.bytes).toUpperCase() }),
    );
    expect(res.status).toBe(200);
  });

  it('answers on the /beyag alias exactly as on /alt', async () => {
    const parent = await parentPayment(h, shop);
    const res = await api.post(proofUrl(parent, 'beyag'), proofBody(png(3, 3, 7)));
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({ parent_uid: parent, type: 'proof' });
    const doc = await api.get(`/beyag/transactions/${parent}/proof/document`);
    expect(doc.status).toBe(200);
    expect(doc.headers['content-type']).toBe('image/png');
  });
});

describe('payment proof: document download', () => {
  it('returns the exact bytes with the stored type and name, by parent uid and by proof uid', async () => {
    const parent = await parentPayment(h, shop);
    const file = jpeg('download me', 'photo of receipt.jpg');
    const sent = await api.post(proofUrl(parent), proofBody(file));
    for (const uid of [parent, sent.body.transaction.uid]) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/alt/transactions/${uid}/proof/document`,
        headers: { authorization: shop.auth },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.headers['content-disposition']).toBe(
        `attachment; filename="photo of receipt.jpg"; filename*=UTF-8''photo%20of%20receipt.jpg`,
      );
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.rawPayload.equals(file.bytes)).toBe(true);
    }
  });

  it('gives the newest proof for a parent uid and each proof by its own uid', async () => {
    const parent = await parentPayment(h, shop);
    const first = await api.post(proofUrl(parent), proofBody(pdf('first', 'first.pdf')));
    const second = await api.post(
      proofUrl(parent),
      proofBody(png(5, 5, 3, 'second.png'), { skip_duplicate_check: true }),
    );
    expect(second.status).toBe(200);
    const latest = await api.get(`/alt/transactions/${parent}/proof/document`);
    expect(latest.headers['content-type']).toBe('image/png');
    const older = await api.get(`/alt/transactions/${first.body.transaction.uid}/proof/document`);
    expect(older.headers['content-type']).toBe('application/pdf');
    expect(older.text).toContain('(first) Tj');
  });

  it('stores a file sent twice once', async () => {
    const file = pdf('the very same receipt');
    const a = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(file));
    const b = await api.post(proofUrl(await parentPayment(h, shop)), proofBody(file));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await countDocuments(h.db, sha256(file.bytes))).toBe(1);
    const again = await api.get(`/alt/transactions/${b.body.transaction.uid}/proof/document`);
    expect(again.text).toBe(file.bytes.toString('latin1'));
  });
});

describe('payment proof: logs', () => {
  it('never writes the document content to a log line', async () => {
    const file = png(16, 16, 200);
    const content = file.bytes.toString('base64');
    const parent = await parentPayment(h, shop);
    expect((await api.post(proofUrl(parent), proofBody(file))).status).toBe(200);
    // A rejected proof too: the error path must not echo the body either.
    await api.post(proofUrl(parent), proofBody(file, { amount: -1 }));
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.some((line) => line.includes(content))).toBe(false);
    expect(h.logs.some((line) => line.includes(content.slice(0, 40)))).toBe(false);
  });
});
