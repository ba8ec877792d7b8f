import { describe, expect, it } from 'vitest';
import { formatMinor, moneyText } from '../../src/money/currencies.js';

/** Money as each language writes it: the pages, the cabinet and the e-mails all go through moneyText. */

// Intl writes Russian with no-break spaces: a sum is never split across two lines.
const nb = (s: string) => s.replace(/ /g, '\u00a0');

describe('moneyText', () => {
  it.each([
    [129000, 'RUB', 'ru', nb('1 290,00 ₽')],
    [1999, 'EUR', 'ru', nb('19,99 €')],
    [1999, 'EUR', 'en', '€19.99'],
    [129000, 'RUB', 'en', nb('RUB 1,290.00')],
    [1999, 'USD', 'en', '$19.99'],
    [1999, 'JPY', 'en', '¥1,999'],
    [1999, 'JPY', 'ru', nb('1 999 ¥')],
    [1999, 'KWD', 'en', nb('KWD 1.999')],
    [1999, 'KWD', 'ru', nb('1,999 KWD')],
    [5, 'EUR', 'en', '€0.05'],
    [0, 'EUR', 'ru', nb('0,00 €')],
    [-1999, 'EUR', 'en', '-€19.99'],
  ])('%i minor units of %s in %s: %s', (amount, currency, lang, text) => {
    expect(moneyText(amount, currency, lang)).toBe(text);
  });

  it('keeps every minor unit of the crypto codes, those Intl knows and those it does not', () => {
    expect(moneyText(12345, 'BTC', 'en')).toBe(nb('BTC 0.00012345'));
    expect(moneyText(1500000, 'USDT', 'en')).toBe('1.500000\u00a0USDT');
    expect(moneyText(1500000, 'USDT', 'ru')).toBe(nb('1,500000 USDT'));
  });

  it('is exact beyond what a float holds', () => {
    const amount = Number.MAX_SAFE_INTEGER; // 90 071 992 547 409,91 EUR
    expect(moneyText(amount, 'EUR', 'en')).toBe('€90,071,992,547,409.91');
    expect(formatMinor(amount, 'EUR')).toBe('90071992547409.91');
  });
});
