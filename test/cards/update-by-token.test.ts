import { beforeAll, describe, expect, it } from 'vitest';
import { type GatewayShop, gatewayShop } from '../gateway/helpers.js';
import { client } from '../harness.js';

/**
 * The card routes the platform's client libraries call besides `POST /credit_cards`: creation at
 * `/v2/credit_cards`, and the update of a stored card's holder or expiry by the token in the path
 * (`POST /credit_cards/{token}`, `PUT /v2/credit_cards/{token}`).
 */

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const NUMBER = '5555555555554444';
const CVC = '737';
const fullCard = { number: NUMBER, holder: 'Jane Roe', exp_month: '03', exp_year: '2031' };
const tokenize = async (as: GatewayShop = g) => (await as.send('/credit_cards', fullCard)).body;

const UPDATES = [
  ['POST', (token: string) => `/credit_cards/${token}`],
  ['PUT', (token: string) => `/v2/credit_cards/${token}`],
] as const;

type Method = (typeof UPDATES)[number][0];
const update = (method: Method, url: string, request: unknown, as: GatewayShop = g) =>
  as.api.send(method, url, { request });

const tokenMissing = {
  response: { message: 'Token does not exist.', errors: { token: ['does not exist'] } },
};

describe('POST /v2/credit_cards', () => {
  it('tokenizes as POST /credit_cards does', async () => {
    const v2 = await g.send('/v2/credit_cards', fullCard);
    expect(v2.status).toBe(200);
    const v1 = await g.send('/credit_cards', fullCard);
    expect(v2.body).toEqual({ ...v1.body, token: expect.stringMatching(/^[0-9A-Za-z]{64}$/) });
    expect(v2.body.token).not.toBe(v1.body.token);
    const expired = await g.send('/v2/credit_cards', { ...fullCard, exp_year: '2020' });
    expect(expired.status).toBe(422);
    expect(expired.body).toEqual({
      response: { message: 'Date is expired.', errors: { base: ['Date is expired'] } },
    });
  });
});

describe.each(UPDATES)('%s: update a stored card by token', (method, path) => {
  it('changes holder and expiry, keeps the token, answers the card record', async () => {
    const card = await tokenize();
    const res = await update(method, path(card.token), {
      holder: 'New Holder',
      exp_month: '11',
      exp_year: '2033',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...card, holder: 'New Holder', exp_month: 11, exp_year: 2033 });
    const paid = await g.pay({ credit_card: { token: card.token } });
    expect(paid.body.transaction.credit_card).toEqual(res.body);
  });

  it('changes only what is sent; a card nested as credit_card works too', async () => {
    const card = await tokenize();
    const holder = await update(method, path(card.token), { holder: 'Only Holder' });
    expect(holder.body).toEqual({ ...card, holder: 'Only Holder' });
    const nested = await update(method, path(card.token), { credit_card: { exp_month: '04' } });
    expect(nested.body).toEqual({ ...card, holder: 'Only Holder', exp_month: 4 });
  });

  it('never changes the number, and answers no more of the card than tokenization does', async () => {
    const card = await tokenize();
    const res = await update(method, path(card.token), {
      number: '4200000000000000',
      verification_value: CVC,
      holder: 'Jane Roe',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(card);
    expect(res.text).not.toContain(NUMBER);
    // No field holds the code (the text may: a stamp or token is random hex and base62, and "737"
    // turns up in one of about seventy of them).
    expect(Object.keys(res.body)).not.toContain('verification_value');
    expect(Object.values(res.body)).not.toContain(CVC);
    for (const line of g.h.logs) {
      expect(line).not.toContain(NUMBER);
      expect(line).not.toContain(`"verification_value":"${CVC}"`);
    }
  });

  it('names the card by the path: a token in the body changes nothing else', async () => {
    const card = await tokenize();
    const other = await tokenize();
    const res = await update(method, path(card.token), { token: other.token, holder: 'Path Wins' });
    expect(res.body).toEqual({ ...card, holder: 'Path Wins' });
    const untouched = await update(method, path(other.token), {});
    expect(untouched.body).toEqual(other);
  });

  it('refuses a past expiry as "Date is expired", and a malformed one, changing nothing', async () => {
    const card = await tokenize();
    const expired = await update(method, path(card.token), { exp_month: '01', exp_year: '2020' });
    expect(expired.status).toBe(422);
    expect(expired.body).toEqual({
      response: { message: 'Date is expired.', errors: { base: ['Date is expired'] } },
    });
    const pastYear = await update(method, path(card.token), { exp_year: '2025' });
    expect(pastYear.body.response.errors).toEqual({ base: ['Date is expired'] });
    const bad = await update(method, path(card.token), { exp_month: '13', holder: 'A'.repeat(33) });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      response: {
        message: 'Holder is too long (maximum is 32 characters). Exp month must be two digits from 01 to 12.',
        errors: {
          holder: ['is too long (maximum is 32 characters)'],
          exp_month: ['must be two digits from 01 to 12'],
        },
      },
    });
    expect((await update(method, path(card.token), {})).body).toEqual(card);
  });

  it('requires the request object', async () => {
    const card = await tokenize();
    const res = await g.api.send(method, path(card.token), { holder: 'X' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: "Request can't be blank.", errors: { request: ["can't be blank"] } },
    });
  });

  it('answers an unknown token "Token does not exist."', async () => {
    for (const token of ['x'.repeat(64), 'nope']) {
      const res = await update(method, path(token), { holder: 'Nobody' });
      expect(res.status, token).toBe(422);
      expect(res.body).toEqual(tokenMissing);
    }
  });

  it("answers another shop's token as unknown and leaves the card alone", async () => {
    const owner = await gatewayShop();
    const theirs = await tokenize(owner);
    const res = await update(method, path(theirs.token), { holder: 'Thief', exp_year: '2040' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(tokenMissing);
    const paid = await owner.pay({ credit_card: { token: theirs.token } });
    expect(paid.body.transaction.credit_card).toEqual(theirs);
  });

  it('asks for credentials', async () => {
    const card = await tokenize();
    const res = await client(g.h, undefined).send(method, path(card.token), { request: { holder: 'X' } });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body.response.errors.base).toHaveLength(1);
  });
});
