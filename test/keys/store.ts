import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { StoreDeps } from '../../src/control/commands.js';
import type { Keyring } from '../../src/crypto/keyring.js';
import { deriveKey, seal } from '../../src/crypto/secretbox.js';
import type { Db } from '../../src/db/db.js';

/**
 * A store of its own for the rotation tests (test/fresh-store.ts): a rotation walks every sealed
 * value of the store, and the shared test store holds values of other test workers, sealed under
 * their own master keys.
 */
export { type FreshStore, freshStore } from '../fresh-store.js';

export const silentLog = pino({ level: 'silent' }) as FastifyBaseLogger;

/** Configuration of an instance with these master keys. */
export const keysConfig = (current: Buffer, previous: Buffer[] = []) =>
  loadConfig({
    PUBLIC_URL: 'http://kopek.test',
    KOPEK_MASTER_KEY: current.toString('hex'),
    ...(previous.length > 0
      ? { KOPEK_MASTER_KEY_PREVIOUS: previous.map((k) => k.toString('hex')).join(',') }
      : {}),
    LOG_LEVEL: 'silent',
  });

/** What `kopek keys rotate` gets when it runs with `ring`. */
export function rotateDeps(db: Db, clock: Clock, ring: Keyring): StoreDeps {
  const config = keysConfig(ring.currentKey, ring.previousKeys);
  return { db, clock, masterKey: ring, publicUrl: config.publicUrl, config, log: silentLog };
}

/** A value sealed as Kopek sealed it before master key ids: bare base64, no key id. */
export const sealedBeforeKeyIds = (master: Buffer, purpose: string, text: string, aad = '') =>
  seal(deriveKey(master, purpose), text, aad);
