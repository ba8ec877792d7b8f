/** Card brands Kopek recognises by number prefix, in the platform's spelling (`master`, not `mastercard`). */
export type CardBrand =
  | 'visa'
  | 'master'
  | 'maestro'
  | 'amex'
  | 'discover'
  | 'jcb'
  | 'diners'
  | 'unionpay'
  | 'mir'
  | 'belkart'
  | 'unknown';

// Order matters: narrower ranges (Belkart 9112, Mir 2200–2204, Discover's 622126–622925 inside
// UnionPay's 62) are tried before the wider ones that contain them.
const RULES: readonly [CardBrand, RegExp][] = [
  ['belkart', /^9112/],
  ['mir', /^220[0-4]/],
  ['amex', /^3[47]/],
  ['jcb', /^35(2[89]|[3-8]\d)/],
  ['diners', /^(30[0-5]|309|36|3[89])/],
  ['discover', /^(6011|64[4-9]|65|622(12[6-9]|1[3-9]\d|[2-8]\d\d|9[01]\d|92[0-5]))/],
  ['unionpay', /^62/],
  ['master', /^(5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/],
  ['maestro', /^(50|5[6-9]|6)/],
  ['visa', /^4/],
];

export function brandOf(number: string): CardBrand {
  for (const [brand, prefix] of RULES) if (prefix.test(number)) return brand;
  return 'unknown';
}

/** The Luhn (mod 10) check digit test every card number passes. */
export function luhnValid(number: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = number.length - 1; i >= 0; i--) {
    let digit = number.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}
