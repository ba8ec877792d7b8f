import type { Queryable } from '../db/db.js';
import { Keyring, keyringOf, MasterKeyError, type MasterKeys, masterKeyId } from './keyring.js';
import { deriveKey, open } from './secretbox.js';

/**
 * Lookup keys: HMAC keys whose outputs are stored or shown and compared later. A card's stamp is in
 * the API ("equal for every token of one card"), in every payment's card and in the duplicate-charge
 * check; a request's fingerprint is compared with the stored one for 24 hours. Re-deriving them from a
 * new master key would change those values (and recomputing them would rewrite payment history), so
 * they stay as first derived, from the master key the store was created with: sealed in
 * `lookup_keys`, re-sealed by `kopek keys rotate` like any other sealed column. The cost: a leaked
 * master key's stamps stay brute-forceable after a rotation (as they would be anyway from the payments
 * already seen); the rotation protects what is encrypted.
 */
export const LOOKUP_PURPOSES = ['card-stamp', 'idempotency-fingerprint'] as const;

/** How lookup_keys.key_enc is sealed (sealed-columns.ts lists it). */
export const LOOKUP_SEAL_PURPOSE = 'lookup-key';
export const lookupAad = (purpose: string) => `lookup-key:${purpose}`;

/**
 * The keyring of `keys` with its lookup keys loaded: the oldest stored key of each purpose that the
 * ring opens. Rows under master keys the ring does not hold are not this store's and are passed over.
 *
 * One not stored yet is derived from the store's original master key and stored, when the ring has
 * previous keys or `store` says so (a rotation, before it re-seals anything). A ring of one key stores
 * nothing: it derives them from its key, as Kopek always did, so a process started with a wrong key
 * leaves no rows behind.
 */
export async function openKeyring(db: Queryable, keys: MasterKeys, store = false): Promise<Keyring> {
  const ring = keyringOf(keys);
  if (LOOKUP_PURPOSES.every((p) => ring.hasLookupKey(p))) return ring;
  const held = new Set([ring.currentId, ...ring.previousIds]);
  const rows = await db.query<{ purpose: string; key_enc: string }>(
    'SELECT purpose, key_enc FROM lookup_keys ORDER BY id',
  );
  for (const row of rows) {
    const id = Keyring.keyIdOf(row.key_enc);
    if (ring.hasLookupKey(row.purpose) || id === undefined || !held.has(id)) continue;
    try {
      ring.pinLookupKey(row.purpose, ring.open(LOOKUP_SEAL_PURPOSE, row.key_enc, lookupAad(row.purpose)));
    } catch (err) {
      if (!(err instanceof MasterKeyError)) throw err;
    }
  }
  const missing = LOOKUP_PURPOSES.filter((p) => !ring.hasLookupKey(p));
  if (missing.length === 0 || (!store && ring.previousIds.length === 0)) return ring;
  const root = ring.previousIds.length > 0 ? await originalKey(db, ring) : ring.currentKey;
  for (const purpose of missing) {
    const key = deriveKey(root, purpose);
    await db.query('INSERT INTO lookup_keys (purpose, key_enc) VALUES ($1, $2)', [
      purpose,
      ring.seal(LOOKUP_SEAL_PURPOSE, key, lookupAad(purpose)),
    ]);
    ring.pinLookupKey(purpose, key);
  }
  return ring;
}

/**
 * With several keys and no lookup keys stored yet (a store upgraded and rotated at once), the original
 * master key is the one that sealed the oldest shops' signing keys: the store had one key until then,
 * and nothing re-seals a signing key before lookup keys are stored (a rotation stores them first).
 */
async function originalKey(db: Queryable, ring: Keyring): Promise<Buffer> {
  const rows = await db.query<{ private_key_enc: string }>(
    'SELECT private_key_enc FROM shops ORDER BY created_at, id LIMIT 20',
  );
  const byId = new Map(ring.keys.map((k) => [masterKeyId(k), k]));
  for (const row of rows) {
    const id = Keyring.keyIdOf(row.private_key_enc);
    if (id !== undefined) {
      const key = byId.get(id);
      if (key) return key;
      continue;
    }
    for (const key of ring.keys) {
      try {
        open(deriveKey(key, 'shop-signing-key'), row.private_key_enc);
        return key;
      } catch {
        // Not this key.
      }
    }
  }
  return ring.currentKey;
}
