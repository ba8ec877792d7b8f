import { beforeAll, describe, expect, it } from 'vitest';
import { card, charge, type GatewayShop, gatewayShop } from '../gateway/helpers.js';
import { withClock } from '../harness.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const NUMBER = '5555555555554444';
const CVC = '737';
const tokenize = (request: Record<string, unknown>, as: GatewayShop = g) => as.send('/credit_cards', request);
const fullCard = { number: NUMBER, holder: 'Jane Roe', exp_month: '03', exp_year: '2031' };

/** Every string and number in a parsed JSON value. */
function leaves(value: unknown, out: unknown[] = []): unknown[] {
  if (value && typeof value === 'object') for (const v of Object.values(value)) leaves(v, out);
  else out.push(value);
  return out;
}

describe('card vault', () => {
  it('tokenizes a card and answers the card record the platform answers', async () => {
    const res = await tokenize(fullCard);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      holder: 'Jane Roe',
      stamp: expect.stringMatching(/^[0-9a-f]{64}$/),
      brand: 'master',
      last_4: '4444',
      first_1: '5',
      bin: '555555',
      issuer_country: null,
      issuer_name: null,
      product: null,
      token: expect.stringMatching(/^[0-9A-Za-z]{64}$/),
      token_provider: null,
      exp_month: 3,
      exp_year: 2031,
    });
  });

  it('stores neither the number nor the CVC in clear: the raw row holds only the sealed number', async () => {
    const res = await tokenize({ ...fullCard, verification_value: CVC });
    const [row] = await g.h.db.query<Record<string, unknown>>('SELECT * FROM cards WHERE token = $1', [
      res.body.token,
    ]);
    expect(row).toBeDefined();
    expect(Object.keys(row!).sort()).toEqual(
      [
        'bin',
        'brand',
        'created_at',
        'exp_month',
        'exp_year',
        'first_1',
        'holder',
        'last_4',
        'number_enc',
        'shop_id',
        'stamp',
        'token',
        'updated_at',
      ].sort(),
    );
    expect(JSON.stringify(row)).not.toContain(NUMBER);
    expect(Object.values(row!)).not.toContain(CVC);
    // Marked with the id of the master key that sealed it (kopek keys rotate finds what is left by it).
    expect(row!.number_enc).toMatch(/^k1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
  });

  it('keeps the number and CVC of a payment out of the cards row, the ledger and every log line', async () => {
    const paid = await g.pay({ credit_card: card(NUMBER, { verification_value: CVC }) });
    expect(paid.body.transaction.status).toBe('successful');
    const token = paid.body.transaction.credit_card.token;
    const [cardRow] = await g.h.db.query('SELECT * FROM cards WHERE token = $1', [token]);
    const [txRow] = await g.h.db.query('SELECT * FROM transactions WHERE uid = $1', [
      paid.body.transaction.uid,
    ]);
    for (const row of [cardRow, txRow]) {
      expect(JSON.stringify(row)).not.toContain(NUMBER);
      expect(leaves(row)).not.toContain(CVC);
    }
    expect(g.h.logs.some((line) => line.includes(paid.body.transaction.uid))).toBe(true);
    for (const line of g.h.logs) {
      expect(line).not.toContain(NUMBER);
      expect(line).not.toContain(`"verification_value":"${CVC}"`);
      expect(leaves(JSON.parse(line))).not.toContain(CVC);
    }
  });

  it('gives every tokenization its own token and the same stamp for the same number', async () => {
    const a = await tokenize(fullCard);
    const b = await tokenize({ ...fullCard, holder: 'Other Name' });
    const other = await tokenize({ ...fullCard, number: '4200000000000000' });
    expect(a.body.token).not.toBe(b.body.token);
    expect(a.body.stamp).toBe(b.body.stamp);
    expect(other.body.stamp).not.toBe(a.body.stamp);
    const elsewhere = await tokenize(fullCard, await gatewayShop());
    expect(elsewhere.body.stamp).toBe(a.body.stamp);
  });

  it('pays with a token, with and without the CVC', async () => {
    const { body } = await tokenize(fullCard);
    for (const credit_card of [{ token: body.token, verification_value: '123' }, { token: body.token }]) {
      const res = await g.pay({ credit_card });
      expect(res.status).toBe(200);
      expect(res.body.transaction.status).toBe('successful');
      expect(res.body.transaction.credit_card).toEqual(body);
    }
  });

  it('re-tokenizing with a token keeps the token and updates holder and expiry', async () => {
    const { body } = await tokenize(fullCard);
    const res = await tokenize({
      token: body.token,
      holder: 'New Holder',
      exp_month: '11',
      exp_year: '2033',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...body, holder: 'New Holder', exp_month: 11, exp_year: 2033 });
    const paid = await g.pay({ credit_card: { token: body.token } });
    expect(paid.body.transaction.credit_card).toMatchObject({
      token: body.token,
      exp_month: 11,
      exp_year: 2033,
    });
  });

  it('accepts the card object nested as credit_card, reporting errors under it', async () => {
    const { body } = await tokenize(fullCard);
    const res = await tokenize({ credit_card: { token: body.token, exp_month: '04' } });
    expect(res.body).toMatchObject({ token: body.token, exp_month: 4, exp_year: 2031 });
    const bad = await tokenize({ credit_card: { token: body.token, exp_month: '4' } });
    expect(bad.status).toBe(422);
    expect(bad.body.response.errors).toEqual({
      credit_card: { exp_month: ['must be two digits from 01 to 12'] },
    });
  });

  it('refuses a past expiry when re-tokenizing, as "Date is expired"', async () => {
    const { body } = await tokenize(fullCard);
    const res = await tokenize({ token: body.token, exp_month: '01', exp_year: '2020' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: 'Date is expired.', errors: { base: ['Date is expired'] } },
    });
  });

  it('requires the card fields to tokenize', async () => {
    const res = await tokenize({});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: {
        message:
          "Number can't be blank. Holder can't be blank. Exp month can't be blank. Exp year can't be blank.",
        errors: {
          number: ["can't be blank"],
          holder: ["can't be blank"],
          exp_month: ["can't be blank"],
          exp_year: ["can't be blank"],
        },
      },
    });
  });

  it('does not know another shop\'s token, to pay or to re-tokenize: "Token does not exist."', async () => {
    const theirs = await tokenize(fullCard, await gatewayShop());
    const paid = await g.pay({ credit_card: { token: theirs.body.token } });
    expect(paid.status).toBe(422);
    expect(paid.body).toEqual({
      response: {
        message: 'Token does not exist.',
        errors: { credit_card: { token: ['does not exist'] } },
      },
    });
    const updated = await tokenize({ token: theirs.body.token, holder: 'Thief' });
    expect(updated.status).toBe(422);
    expect(updated.body).toEqual({
      response: { message: 'Token does not exist.', errors: { token: ['does not exist'] } },
    });
  });

  it('declines a stored card whose expiry has passed since, by the shop clock: "Date is expired"', async () => {
    const now = g.h.clock.now();
    const { body } = await tokenize({
      ...fullCard,
      exp_month: String(now.getUTCMonth() + 1).padStart(2, '0'),
      exp_year: String(now.getUTCFullYear()),
    });
    await withClock(g.h, 40 * 24 * 3600 * 1000, async () => {
      const res = await g.send('/transactions/payments', charge({ credit_card: { token: body.token } }));
      expect(res.body.transaction).toMatchObject({ status: 'failed', message: 'Date is expired' });
    });
  });
});
