import { describe, expect, it } from 'vitest';
import { brandOf, luhnValid } from '../../src/cards/brand.js';

describe('card brands and the Luhn check', () => {
  it.each([
    ['4200000000000000', 'visa'],
    ['5555555555554444', 'master'],
    ['2221000000000009', 'master'],
    ['6759000000000000', 'maestro'],
    ['378282246310005', 'amex'],
    ['6011111111111117', 'discover'],
    ['3530111333300000', 'jcb'],
    ['30569309025904', 'diners'],
    ['6200000000000005', 'unionpay'],
    ['2200000000000004', 'mir'],
    ['9112300000000000', 'belkart'],
    ['9112000000000006', 'belkart'],
  ])('%s is %s', (number, brand) => {
    expect(luhnValid(number)).toBe(true);
    expect(brandOf(number)).toBe(brand);
  });

  it('names a number of no known range unknown', () => {
    expect(brandOf('1000000000000008')).toBe('unknown');
  });

  it('rejects a number whose check digit is wrong', () => {
    expect(luhnValid('4200000000000001')).toBe(false);
    expect(luhnValid('4200000000000000')).toBe(true);
  });
});
