import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import type { SigningKeys } from '../src/shops/service.js';

/**
 * Notification-signing key pairs made once per run (test/global-setup.ts): generating an RSA pair
 * costs a large share of a second, and a fuzz run that rotates a shop's key would pay it every time.
 * Production makes a fresh pair each time (src/shops/service.ts, generateSigningKeys).
 */
export const SIGNING_KEY_POOL_SIZE = 6;

/** The run's pairs, made side by side on libuv's threads. */
export async function makeSigningKeyPool(size = SIGNING_KEY_POOL_SIZE): Promise<SigningKeys[]> {
  const make = () =>
    promisify(generateKeyPair)('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
  return Promise.all(Array.from({ length: size }, make));
}

/** The pair test shops are created with (newShop): the pool's first. */
export function shopSigningKeys(): SigningKeys {
  return inject('signingKeys')[0] as SigningKeys;
}

let next = 0;

/**
 * A maker for services.signingKeys: the pool's other pairs in turn, so that two pairs asked for one
 * after the other always differ, and neither is the pair shops start with.
 */
export function pooledSigningKeys(): SigningKeys {
  const rest = inject('signingKeys').slice(1);
  const keys = rest[next % rest.length] as SigningKeys;
  next++;
  return keys;
}
