import { beforeAll, describe, expect, it } from 'vitest';
import { validateCardInput } from '../../src/cards/validation.js';
import { ErrorCollector } from '../../src/core/errors.js';
import { card, charge, type GatewayShop, gatewayShop } from '../gateway/helpers.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

/** Pays with `credit_card` changed by `extra` and returns the answer. */
const payWith = (extra: Record<string, unknown>) => g.pay({ credit_card: card('4200000000000000', extra) });

const rejected = (field: string, message: string, sentence: string) => ({
  response: { message: sentence, errors: { credit_card: { [field]: [message] } } },
});

describe('card validation on the gateway (one rule each, errors under credit_card)', () => {
  it('requires the number', async () => {
    const res = await payWith({ number: undefined });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(rejected('number', "can't be blank", "Number can't be blank."));
  });

  it.each(['42000000000', '42000000000000000000', '4200-0000-0000-0000', 'abcd00000000000'])(
    'refuses %s: not 12 to 19 digits',
    async (number) => {
      const res = await payWith({ number });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(
        rejected('number', 'must be 12 to 19 digits', 'Number must be 12 to 19 digits.'),
      );
    },
  );

  it('refuses a number that fails the Luhn check', async () => {
    const res = await payWith({ number: '4200000000000001' });
    expect(res.body).toEqual(rejected('number', 'is not a card number', 'Number is not a card number.'));
  });

  it.each(['400000000002', '4000000000000000006', '4200 0000 0000 0000'])(
    'accepts %s (12 and 19 digits; spaces ignored)',
    async (number) => {
      const res = await payWith({ number });
      expect(res.status).toBe(200);
      expect(res.body.transaction.status).toBe('successful');
    },
  );

  it('requires the CVC with a full card number', async () => {
    const res = await payWith({ verification_value: undefined });
    expect(res.body).toEqual(
      rejected('verification_value', "can't be blank", "Verification value can't be blank."),
    );
  });

  it.each(['12', '12345', 'abc'])('refuses CVC %s: not 3 or 4 digits', async (verification_value) => {
    const res = await payWith({ verification_value });
    expect(res.body).toEqual(
      rejected('verification_value', 'must be 3 or 4 digits', 'Verification value must be 3 or 4 digits.'),
    );
  });

  it('accepts a four-digit CVC', async () => {
    expect((await payWith({ verification_value: '1234' })).body.transaction.status).toBe('successful');
  });

  it('requires the holder', async () => {
    const res = await payWith({ holder: undefined });
    expect(res.body).toEqual(rejected('holder', "can't be blank", "Holder can't be blank."));
  });

  it('refuses a holder longer than 32 characters and accepts 32', async () => {
    const res = await payWith({ holder: 'A'.repeat(33) });
    expect(res.body).toEqual(
      rejected(
        'holder',
        'is too long (maximum is 32 characters)',
        'Holder is too long (maximum is 32 characters).',
      ),
    );
    expect((await payWith({ holder: 'A'.repeat(32) })).status).toBe(200);
  });

  it.each(['1', '13', '00', 'ab', '012'])('refuses exp_month %s', async (exp_month) => {
    const res = await payWith({ exp_month });
    expect(res.body).toEqual(
      rejected(
        'exp_month',
        'must be two digits from 01 to 12',
        'Exp month must be two digits from 01 to 12.',
      ),
    );
  });

  it('reads a JSON integer month as the month without its leading zero', async () => {
    const res = await payWith({ exp_month: 7 });
    expect(res.body.transaction.credit_card.exp_month).toBe(7);
  });

  it.each(['30', '20300', 'abcd'])('refuses exp_year %s', async (exp_year) => {
    const res = await payWith({ exp_year });
    expect(res.body).toEqual(rejected('exp_year', 'must be four digits', 'Exp year must be four digits.'));
  });

  it('refuses a card whose expiry month has ended, as "Date is expired"; the current month is valid', async () => {
    const now = g.h.clock.now();
    const month = now.getUTCMonth() + 1;
    const year = now.getUTCFullYear();
    const last = month === 1 ? { m: 12, y: year - 1 } : { m: month - 1, y: year };
    const mm = String(last.m).padStart(2, '0');
    const res = await payWith({ exp_month: mm, exp_year: String(last.y) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: 'Date is expired.', errors: { credit_card: { base: ['Date is expired'] } } },
    });
    const current = await payWith({ exp_month: String(month).padStart(2, '0'), exp_year: String(year) });
    expect(current.body.transaction.status).toBe('successful');
  });

  it('requires the card itself', async () => {
    const res = await g.send('/transactions/payments', charge({ credit_card: undefined }));
    expect(res.body).toEqual({
      response: { message: "Credit card can't be blank.", errors: { credit_card: ["can't be blank"] } },
    });
  });

  it('reports every broken rule at once', async () => {
    const res = await payWith({
      number: '1',
      verification_value: '1',
      holder: '',
      exp_month: '13',
      exp_year: '1',
    });
    expect(Object.keys(res.body.response.errors.credit_card).sort()).toEqual([
      'exp_month',
      'exp_year',
      'holder',
      'number',
      'verification_value',
    ]);
  });
});

describe("the card validator for other requests (a subscription's card)", () => {
  const now = new Date('2026-01-15T10:00:00Z');

  it('reports under the given key with the same messages', () => {
    const errors = new ErrorCollector();
    const result = validateCardInput(
      { number: '4200000000000001', verification_value: '1', holder: 'J', exp_month: '01', exp_year: '2030' },
      errors,
      ['card'],
      { now, requireCvc: true },
    );
    expect(result).toBeUndefined();
    expect(errors.tree).toEqual({
      card: { number: ['is not a card number'], verification_value: ['must be 3 or 4 digits'] },
    });
  });

  it('returns the checked card, or the token with its CVC', () => {
    const full = validateCardInput(card(), new ErrorCollector(), ['card'], { now, requireCvc: true });
    expect(full).toEqual({
      kind: 'number',
      number: '4200000000000000',
      holder: 'John Doe',
      expMonth: 1,
      expYear: 2030,
      cvc: '123',
    });
    const token = validateCardInput(
      { token: 'abc', verification_value: '321' },
      new ErrorCollector(),
      ['card'],
      {
        now,
        requireCvc: true,
      },
    );
    expect(token).toEqual({ kind: 'token', token: 'abc', cvc: '321' });
  });
});
