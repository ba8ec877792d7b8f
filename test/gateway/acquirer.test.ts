import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/cards/brand.js';
import {
  avsCvcResult,
  decideCharge,
  decideCredit,
  finishAuthentication,
} from '../../src/gateway/acquirer.js';
import { KOPEK_CARDS, TEST_CARDS } from '../../src/gateway/test-cards.js';

const facts = (number: string, extra: Partial<Parameters<typeof decideCharge>[0]> = {}) => ({
  type: 'payment' as const,
  number,
  threeDsActive: false,
  chargedBefore: false,
  expired: false,
  ...extra,
});

describe('the sandbox acquirer (pure decisions)', () => {
  it('has Luhn-valid, distinct numbers in its test-card table', () => {
    const numbers = TEST_CARDS.map((c) => c.number);
    expect(new Set(numbers).size).toBe(numbers.length);
    for (const n of numbers) expect(luhnValid(n), n).toBe(true);
  });

  it('decides every test card, with and without 3-D Secure', () => {
    for (const c of TEST_CARDS) {
      const off = decideCharge(facts(c.number));
      const on = decideCharge(facts(c.number, { threeDsActive: true }));
      switch (c.behaviour.kind) {
        case 'approved':
        case 'first_then_declined':
          expect(off, c.number).toEqual({ outcome: 'successful' });
          expect(on, c.number).toEqual({ outcome: 'successful' });
          break;
        case 'declined':
          expect(on).toEqual({ outcome: 'failed', message: 'Payment was declined' });
          expect(decideCharge(facts(c.number, { type: 'authorization' }))).toEqual({
            outcome: 'failed',
            message: 'Authorization was declined',
          });
          break;
        case 'error':
          expect(on.outcome).toBe('error');
          break;
        case 'timeout':
          expect(on).toEqual({ outcome: 'timeout' });
          break;
        case 'three_ds':
          expect(off).toEqual({ outcome: 'successful' });
          expect(on).toEqual({
            outcome: 'incomplete',
            flow: c.behaviour.flow,
            authentication: c.behaviour.authentication,
          });
      }
    }
  });

  it('declines the first-then-declined card once it was charged, and any expired stored card', () => {
    expect(decideCharge(facts(KOPEK_CARDS.firstThenDeclined, { chargedBefore: true }))).toEqual({
      outcome: 'failed',
      message: 'Insufficient funds',
    });
    expect(decideCharge(facts('4200000000000000', { expired: true }))).toEqual({
      outcome: 'failed',
      message: 'Date is expired',
    });
    expect(decideCredit('4200000000000000', true).outcome).toBe('failed');
    expect(decideCredit('4012000000001097', false)).toEqual({ outcome: 'successful' });
  });

  it('reads AVS from the first digit of address and zip, CVC from the code', () => {
    expect(avsCvcResult('12 Main', 'LV-2082', '111')).toEqual({
      avs_verification: { result_code: 'B' },
      cvc_verification: { result_code: 'M' },
    });
    expect(avsCvcResult('4876 Gallegos Vista Apt. 382', '220100', '123')).toEqual({
      avs_verification: { result_code: '1' },
      cvc_verification: { result_code: '1' },
    });
    expect(avsCvcResult(null, undefined, undefined).avs_verification.result_code).toBe('1');
  });

  it('finishes 3-D Secure by the card result when passed, and fails when the challenge failed', () => {
    expect(finishAuthentication('A', 'passed', 'visa')).toMatchObject({
      successful: true,
      verification: { pa_status: 'A', eci: '06' },
    });
    expect(finishAuthentication('R', 'passed', 'master')).toMatchObject({
      successful: false,
      verification: { pa_status: 'R', eci: '00', cavv: null },
    });
    expect(finishAuthentication('Y', 'failed', 'visa')).toMatchObject({
      successful: false,
      verification: { pa_status: 'N', fail_reason: 'Challenge failed' },
    });
  });
});
