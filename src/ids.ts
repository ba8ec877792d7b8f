import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_LENGTH = 24;

/** An unguessable base62 token (~143 bits); rejection sampling keeps every character equally likely. */
export function randomToken(length = TOKEN_LENGTH): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export type IdPrefix = 'prd' | 'cst' | 'pln' | 'sbs' | 'chk';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken()}`;
}

/** Whether a string has the shape of an id Kopek hands out with that prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{${TOKEN_LENGTH}}$`).test(value);
}
