import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_LENGTH = 24;

// Random bytes are drawn from the system's CSPRNG a pool at a time and each byte is used once: a
// request that makes several ids and a token then asks the generator once, not four times.
const pool = Buffer.alloc(4096);
let used = pool.length;

/** `n` bytes from the CSPRNG, never handed out twice. */
export function secureRandomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (used + n > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const out = Buffer.from(pool.subarray(used, used + n));
  pool.fill(0, used, used + n);
  used += n;
  return out;
}

const ALPHABET_CODES = Buffer.from(ALPHABET, 'latin1');

/** An unguessable base62 token (~143 bits); rejection sampling keeps every character equally likely. */
export function randomToken(length = TOKEN_LENGTH): string {
  // Characters are written into a buffer and decoded once: appending them one by one to a string
  // built a chain of a hundred pieces per request for the engine to flatten.
  const out = Buffer.allocUnsafe(length);
  let n = 0;
  while (n < length) {
    const bytes = secureRandomBytes(length + 8);
    for (let i = 0; i < bytes.length && n < length; i++) {
      const byte = bytes[i] as number;
      if (byte < 248) out[n++] = ALPHABET_CODES[byte % 62] as number;
    }
  }
  return out.toString('latin1');
}

export type IdPrefix = 'prd' | 'cst' | 'pln' | 'sbs' | 'chk' | 'eml';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomToken()}`;
}

/**
 * Whether a string is shaped like an id with that prefix: the prefix, `_`, letters and digits. The
 * length is no part of the shape: an id of another length (as the platform Kopek mirrors makes them)
 * is well-formed, and simply not found.
 */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]+$`).test(value);
}
