/**
 * Currencies Kopek accepts, with the number of minor-unit digits (the exponent): ISO 4217 plus
 * the crypto codes of decisions.md. Every amount in Kopek is an integer count of minor units.
 */
const ISO_4217_EXPONENT_0 = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF';
const ISO_4217_EXPONENT_3 = 'BHD IQD JOD KWD LYD OMR TND';
const ISO_4217_EXPONENT_4 = 'CLF UYW';
const ISO_4217_EXPONENT_2 = `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN
  BWP BYN BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP
  GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL
  MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR
  PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY
  TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL`;
/** Crypto codes: BTC counts satoshi; ETH is kept at 8 digits so amounts stay exact integers. */
const CRYPTO: Record<string, number> = { BTC: 8, ETH: 8, USDT: 6, USDC: 6 };

const EXPONENTS = new Map<string, number>();
for (const [list, exp] of [
  [ISO_4217_EXPONENT_0, 0],
  [ISO_4217_EXPONENT_2, 2],
  [ISO_4217_EXPONENT_3, 3],
  [ISO_4217_EXPONENT_4, 4],
] as const) {
  for (const code of list.split(/\s+/).filter(Boolean)) EXPONENTS.set(code, exp);
}

export function isIsoCurrency(code: string): boolean {
  return EXPONENTS.has(code);
}

export function isKnownCurrency(code: string): boolean {
  return EXPONENTS.has(code) || code in CRYPTO;
}

/** Digits after the decimal point for a currency (2 when unknown, which validation prevents). */
export function currencyExponent(code: string): number {
  return EXPONENTS.get(code) ?? CRYPTO[code] ?? 2;
}

/** "1999" minor units of EUR → "19.99"; of JPY → "1999"; of KWD → "1.999". */
export function formatMinor(amount: number, currency: string): string {
  const exp = currencyExponent(currency);
  const negative = amount < 0;
  const digits = String(Math.abs(amount)).padStart(exp + 1, '0');
  const whole = exp === 0 ? digits : digits.slice(0, -exp);
  const frac = exp === 0 ? '' : `.${digits.slice(-exp)}`;
  return `${negative ? '-' : ''}${whole}${frac}`;
}

/** A human money string for pages and e-mails: "19.99 EUR". */
export function formatMoney(amount: number, currency: string): string {
  return `${formatMinor(amount, currency)} ${currency}`;
}

const FORMATS = new Map<string, Intl.NumberFormat>();

function numberFormat(lang: string, currency: string): Intl.NumberFormat {
  const key = `${lang} ${currency}`;
  let format = FORMATS.get(key);
  if (!format) {
    const digits = currencyExponent(currency);
    const places = { minimumFractionDigits: digits, maximumFractionDigits: digits };
    try {
      format = new Intl.NumberFormat(lang, { style: 'currency', currency, ...places });
    } catch {
      // A code Intl does not take as a currency (USDT, USDC): the number as the language writes it.
      format = new Intl.NumberFormat(lang, places);
    }
    FORMATS.set(key, format);
  }
  return format;
}

/**
 * Money as a reader of `lang` writes it, with the currency's own minor units: "€19.99" in English,
 * "19,99 €" and "1 290,00 ₽" in Russian (the spaces no-break), "¥1,999", "KWD 1.999". The amount is
 * formatted from its exact decimal text, never through a float. The API keeps minor units.
 */
export function moneyText(amount: number, currency: string, lang: string): string {
  const format = numberFormat(lang, currency);
  const text = format.format(formatMinor(amount, currency) as Intl.StringNumericLiteral);
  return format.resolvedOptions().style === 'currency' ? text : `${text}\u00a0${currency}`;
}
