import { beforeAll, describe, expect, it } from 'vitest';
import { client } from '../harness.js';
import { charge, type GatewayShop, gatewayShop } from './helpers.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const notFound = { response: { message: 'Record not found', errors: { base: ['Record not found'] } } };

describe('query by uid', () => {
  it('answers the transaction as the charge answered it', async () => {
    const paid = await g.pay();
    const res = await g.api.get(`/transactions/${paid.body.transaction.uid}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(paid.body);
  });

  it("answers 404 for another shop's, an unknown and a malformed uid", async () => {
    const theirs = (await (await gatewayShop()).pay()).body.transaction.uid;
    for (const uid of [theirs, '00000000-0000-4000-8000-000000000000', 'not-a-uid', '1-310b0da80b']) {
      const res = await g.api.get(`/transactions/${uid}`);
      expect(res.status, uid).toBe(404);
      expect(res.body).toEqual(notFound);
    }
  });
});

describe('query by tracking_id', () => {
  it('answers at /v2 every match, the newest first', async () => {
    const a = (await g.pay({ tracking_id: 'q-1' })).body.transaction;
    const b = (await g.authorize({ tracking_id: 'q-1' })).body.transaction;
    const c = (await g.send('/transactions/captures', { parent_uid: b.uid, amount: 100, tracking_id: 'q-1' }))
      .body.transaction;
    await g.pay({ tracking_id: 'q-other' });
    await (await gatewayShop()).pay({ tracking_id: 'q-1' });
    const res = await g.api.get('/v2/transactions/tracking_id/q-1');
    expect(res.status).toBe(200);
    expect(res.body.transactions.map((t: { uid: string }) => t.uid)).toEqual([c.uid, b.uid, a.uid]);
    expect(res.body.transactions[2]).toEqual(a);
  });

  it('answers at /v2 the 10 newest matches only', async () => {
    const uids: string[] = [];
    for (let i = 0; i < 12; i++) uids.push((await g.pay({ tracking_id: 'q-many' })).body.transaction.uid);
    const res = await g.api.get('/v2/transactions/tracking_id/q-many');
    expect(res.body.transactions.map((t: { uid: string }) => t.uid)).toEqual(uids.slice(2).reverse());
  });

  it('answers an empty list when nothing matches', async () => {
    const res = await g.api.get('/v2/transactions/tracking_id/nothing-here');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ transactions: [] });
  });

  it('decodes the tracking_id of the path', async () => {
    await g.pay({ tracking_id: 'order 7/b' });
    const res = await g.api.get(`/v2/transactions/tracking_id/${encodeURIComponent('order 7/b')}`);
    expect(res.body.transactions).toHaveLength(1);
  });

  it('finds a tracking_id of the full 255 characters, even percent-encoded', async () => {
    const long = `${'t/'.repeat(127)}z`;
    expect(long).toHaveLength(255);
    const paid = (await g.pay({ tracking_id: long })).body.transaction;
    const res = await g.api.get(`/v2/transactions/tracking_id/${encodeURIComponent(long)}`);
    expect(res.status).toBe(200);
    expect(res.body.transactions.map((t: { uid: string }) => t.uid)).toEqual([paid.uid]);
    const v1 = await g.api.get(`/transactions/tracking_id/${encodeURIComponent(long)}`);
    expect(v1.body).toEqual({ transaction: paid });
  });

  it("answers the newest match as `transaction` at /transactions/tracking_id/{id}, as the platform's Ruby client reads it", async () => {
    await g.pay({ tracking_id: 'q-v1' });
    const newest = (await g.pay({ tracking_id: 'q-v1' })).body.transaction;
    await (await gatewayShop()).pay({ tracking_id: 'q-v1' });
    const v1 = await g.api.get('/transactions/tracking_id/q-v1');
    expect(v1.status).toBe(200);
    expect(v1.body).toEqual({ transaction: newest });
    expect(v1.body.transaction).toEqual(
      (await g.api.get('/v2/transactions/tracking_id/q-v1')).body.transactions[0],
    );
    const none = await g.api.get('/transactions/tracking_id/nothing-here');
    expect(none.status).toBe(404);
    expect(none.body).toEqual(notFound);
  });

  it("answers another shop's tracking_id as none, and asks for credentials", async () => {
    await (await gatewayShop()).pay({ tracking_id: 'q-theirs' });
    expect((await g.api.get('/v2/transactions/tracking_id/q-theirs')).body).toEqual({ transactions: [] });
    const theirs = await g.api.get('/transactions/tracking_id/q-theirs');
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual(notFound);
    for (const path of ['/transactions/tracking_id/q-theirs', '/v2/transactions/tracking_id/q-theirs']) {
      const anonymous = await client(g.h, undefined).get(path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.response.errors.base).toHaveLength(1);
    }
  });
});

describe('gateway requests', () => {
  it('answers 401 wrapped in response, with WWW-Authenticate, without credentials', async () => {
    const res = await client(g.h, undefined).post('/transactions/payments', { request: charge() });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body.response.errors.base).toHaveLength(1);
  });

  it('requires the request object', async () => {
    const res = await g.api.post('/transactions/payments', { amount: 100 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: "Request can't be blank.", errors: { request: ["can't be blank"] } },
    });
  });

  it('says plainly that encrypted_credit_card is not supported', async () => {
    const res = await g.send('/transactions/payments', {
      ...charge(),
      credit_card: undefined,
      encrypted_credit_card: { number: '$begatewaycsejs_1_0_0$AAAA' },
    });
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({
      encrypted_credit_card: [
        'is not supported: send the card as credit_card (number, verification_value, holder, exp_month, exp_year) or its token',
      ],
    });
  });

  it('reports every broken field of a charge at once', async () => {
    const res = await g.send('/transactions/payments', {
      ...charge(),
      amount: 10.5,
      currency: 'XYZ',
      description: '',
      language: 'xx',
      return_url: 'ftp://x',
      customer: { ip: 'nope', email: 'nope' },
      billing_address: { country: 'ZZ' },
    });
    expect(res.status).toBe(422);
    expect(res.body.response.errors).toEqual({
      amount: ['must be an integer'],
      currency: ['is invalid'],
      description: ["can't be blank"],
      language: ['is not included in the list'],
      return_url: ['must be an absolute http(s) URL'],
      customer: { ip: ['is invalid'], email: ['is invalid'] },
      billing_address: { country: ['is invalid'] },
    });
  });

  it('accepts a numeric string amount and answers it as an integer; refuses zero and negatives', async () => {
    expect((await g.pay({ amount: '250' })).body.transaction.amount).toBe(250);
    for (const amount of [0, -5, '-5', 'abc']) {
      const res = await g.pay({ amount });
      expect(res.status, String(amount)).toBe(422);
      expect(res.body.response.errors.amount).toHaveLength(1);
    }
  });

  it('keeps minor units of zero- and three-digit currencies as given', async () => {
    expect((await g.pay({ amount: 500, currency: 'JPY' })).body.transaction).toMatchObject({
      amount: 500,
      currency: 'JPY',
    });
    expect((await g.pay({ amount: 1999, currency: 'KWD' })).body.transaction.currency).toBe('KWD');
  });
});
