import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkShopInput, createShop, ShopInputError } from '../../src/shops/service.js';
import { harness } from '../harness.js';

/** A secret key chosen with `kopek shop create --secret` is refused when it is weaker than a generated one. */

const WEAK = [
  ['0'.repeat(64), 1],
  ['ab'.repeat(32), 1],
  ['0123456789abcdef'.repeat(4), 8],
  ['deadbeef'.repeat(8), 4],
  ['00112233445566778899aabbccddee'.padEnd(64, '0'), 15],
] as const;

describe('a chosen secret key', () => {
  it('is refused with fewer than 16 different bytes, saying why and what to use', () => {
    for (const [secret, distinct] of WEAK) {
      expect(() => checkShopInput({ secret }), secret).toThrow(ShopInputError);
      expect(() => checkShopInput({ secret }), secret).toThrow(
        `--secret is too weak: its 32 bytes hold only ${distinct} different values, and at least 16 are needed; use 32 random bytes, e.g. from \`openssl rand -hex 32\``,
      );
    }
    // Sixteen different bytes are enough.
    expect(() => checkShopInput({ secret: '00112233445566778899aabbccddeeff'.repeat(2) })).not.toThrow();
  });

  it('is refused when it is not 32 bytes of hexadecimal', () => {
    for (const secret of [
      'short',
      randomBytes(15).toString('hex'),
      `${randomBytes(32).toString('hex')}0`,
      'g'.repeat(64),
    ])
      expect(() => checkShopInput({ secret }), secret).toThrow(
        /^--secret must be 64 hexadecimal characters \(32 bytes\)/,
      );
  });

  it('is accepted when random: every one of many generated keys passes', () => {
    for (let i = 0; i < 2000; i++) {
      const secret = randomBytes(32).toString('hex');
      expect(() => checkShopInput({ secret: i % 2 ? secret : secret.toUpperCase() })).not.toThrow();
    }
  });

  it('is refused by the store command too, so no path makes a shop with a weak key', async () => {
    const h = await harness();
    await expect(createShop(h, { secret: 'ab'.repeat(32), test: true })).rejects.toThrow(
      /--secret is too weak/,
    );
  });
});
