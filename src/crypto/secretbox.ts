import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { secureRandomBytes } from '../ids.js';

/** A 32-byte key for one purpose, derived from the master key so purposes never share a key. */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `kopek:${purpose}`, 32));
}

/** AES-256-GCM: returns base64 of iv(12) | tag(16) | ciphertext. */
export function seal(key: Buffer, plaintext: string | Buffer, aad = ''): string {
  const iv = secureRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
}

export function open(key: Buffer, sealed: string, aad = ''): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
}
