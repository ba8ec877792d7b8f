/**
 * What a reader of a Russian page would see as English: Latin-script words, apart from names that
 * are written in Latin letters in every language (card brands, Kopek, 3-D Secure, CVC) and codes
 * (currencies, countries, states: two or three capitals). Numbers, card digits, ids, e-mail and web
 * addresses are not words. The shop's own texts (its name, a product's name) are taken out first.
 */

export const LATIN_NAMES = new Set([
  'Kopek',
  'Visa',
  'Mastercard',
  'Maestro',
  'American',
  'Express',
  'Discover',
  'Diners',
  'Club',
  'UnionPay',
  'Mir',
  'Belkart',
  'JCB',
  'Secure',
  'CVC',
  // Names of standards, written so in every language.
  'SMTP',
  'HTTP',
  'HTTPS',
  'HTML',
  'JSON',
  'PDF',
  'PNG',
  'JPEG',
]);

export function englishWords(text: string, shopTexts: readonly string[] = []): string[] {
  let rest = text;
  // The longest first: "Welcome to Gold" before "Gold".
  for (const own of [...shopTexts].sort((a, b) => b.length - a.length))
    if (own) rest = rest.split(own).join(' ');
  const found: string[] = [];
  for (const token of rest.split(/\s+/)) {
    if (token === '' || /\d/.test(token) || token.includes('@') || token.includes('://')) continue;
    // A Kopek id (`cst_…`, `pln_…`): random characters, which now and then hold no digit.
    if (/^[a-z]{3}_[0-9A-Za-z]{20,}[.,;:)]?$/.test(token)) continue;
    for (const word of token.match(/[A-Za-z]+/g) ?? []) {
      if (word.length < 2 || LATIN_NAMES.has(word) || /^[A-Z]{2,3}$/.test(word)) continue;
      found.push(word);
    }
  }
  return found;
}

/** What a key or a placeholder left on a page looks like: `{name}`, `successTitle`, `undefined`. */
export function rawKeys(text: string): string[] {
  return [
    ...(text.match(/\{\w+\}/g) ?? []),
    ...(text.match(/\b[a-z]+[A-Z][A-Za-z]*\b/g) ?? []),
    ...(text.match(/\b(undefined|null|NaN|\[object Object\])\b/g) ?? []),
  ];
}
