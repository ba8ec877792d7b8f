import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { parentPayment, pdf, proofBody, proofUrl } from './files.js';

/**
 * The proof at the gateway's address, `POST /transactions/{uid}/proof`, where the platform's gateway
 * clients send it: the same proof as `/alt/...`, with errors wrapped in `response` as every gateway
 * answer is (those clients read the message from there).
 */

let h: Harness;
let shop: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
  api = client(h, shop);
});

const gatewayUrl = (uid: string) => `/transactions/${uid}/proof`;
const notFound = { response: { message: 'Record not found', errors: { base: ['Record not found'] } } };

describe('payment proof at the gateway address', () => {
  it('stores the proof as /alt does and answers the same transaction', async () => {
    const parent = await parentPayment(h, shop);
    const body = proofBody(pdf('gateway'));
    // The platform's clients repeat the uid inside request.
    const res = await api.post(gatewayUrl(parent), { request: { ...body.request, uid: parent } });
    expect(res.status).toBe(200);
    const other = await api.post(proofUrl(await parentPayment(h, shop)), body);
    expect(res.body).toEqual({
      transaction: {
        ...other.body.transaction,
        uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        parent_uid: parent,
        proof: { ...other.body.transaction.proof, gateway_id: expect.any(Number) },
      },
    });
    expect(res.body.transaction).toMatchObject({ type: 'proof', status: 'successful', amount: 1999 });
    const doc = await api.get(`/alt/transactions/${parent}/proof/document`);
    expect(doc.status).toBe(200);
  });

  it('shares the duplicate window with /alt: one proof per uid within 30 seconds', async () => {
    const parent = await parentPayment(h, shop);
    expect((await api.post(proofUrl(parent), proofBody(pdf('first')))).status).toBe(200);
    const again = await api.post(gatewayUrl(parent), proofBody(pdf('second')));
    expect(again.status).toBe(422);
    expect(again.body.response.message).toBe(
      'A proof for this transaction was received less than 30 seconds ago; send skip_duplicate_check true to submit another one.',
    );
  });

  it('answers invalid requests in the gateway shape, in the platform sentences', async () => {
    const parent = await parentPayment(h, shop);
    const res = await api.post(gatewayUrl(parent), { request: { ...proofBody(pdf()).request, amount: 0 } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: 'Amount must be greater than 0.', errors: { amount: ['must be greater than 0'] } },
    });
    const empty = await api.post(gatewayUrl(parent), {});
    expect(empty.body).toEqual({
      response: { message: "Request can't be blank.", errors: { request: ["can't be blank"] } },
    });
  });

  it("answers 404 for another shop's, an unknown and a malformed uid", async () => {
    const theirs = await parentPayment(h, await newShop(h));
    for (const uid of [theirs, randomUUID(), 'not-a-uid']) {
      const res = await api.post(gatewayUrl(uid), proofBody(pdf()));
      expect(res.status, uid).toBe(404);
      expect(res.body).toEqual(notFound);
    }
  });

  it('asks for credentials', async () => {
    const res = await client(h, undefined).post(gatewayUrl(await parentPayment(h, shop)), proofBody(pdf()));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body.response.errors.base).toHaveLength(1);
  });
});
