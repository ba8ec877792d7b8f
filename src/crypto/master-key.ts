import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { PRIVATE_FILE_MODE, privateDataDir } from '../db/data-dir-mode.js';
import { Keyring } from './keyring.js';

/**
 * The master keys: KOPEK_MASTER_KEY and KOPEK_MASTER_KEY_PREVIOUS when set. In embedded mode without
 * them, a key is generated once into DATA_DIR/master.key (mode 0600) and reused: losing that file makes
 * stored cards unreadable. There, `kopek keys rotate` keeps the key it replaces in
 * DATA_DIR/master.key.previous until nothing is left sealed under it.
 */
export function resolveKeyring(config: Pick<Config, 'masterKey' | 'masterKeyPrevious' | 'dataDir'>): {
  keyring: Keyring;
  generatedAt?: string;
} {
  if (config.masterKey) return { keyring: new Keyring(config.masterKey, config.masterKeyPrevious) };
  // Refuses a DATA_DIR others may write to before reading a key from it or writing one into it.
  privateDataDir(config.dataDir);
  const file = keyFile(config.dataDir, 'current');
  if (existsSync(file)) {
    const previous = keyFile(config.dataDir, 'previous');
    const keyring = new Keyring(readKey(file), existsSync(previous) ? [readKey(previous)] : []);
    return { keyring };
  }
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return { keyring: new Keyring(key), generatedAt: file };
}

/** Whether the master keys are DATA_DIR's files, which `kopek keys rotate` replaces itself. */
export const keysInDataDir = (config: Pick<Config, 'masterKey' | 'databaseUrl'>) =>
  config.masterKey === undefined && config.databaseUrl === undefined;

const FILES = { current: 'master.key', previous: 'master.key.previous', next: 'master.key.next' };
const keyFile = (dataDir: string, which: keyof typeof FILES) => join(dataDir, FILES[which]);

function readKey(file: string): Buffer {
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} does not hold a 64-hex-character key`);
  return Buffer.from(hex, 'hex');
}

/** Writes whole or not at all: a key file is never seen half-written. */
function writeKey(file: string, key: Buffer): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${key.toString('hex')}\n`, { mode: PRIVATE_FILE_MODE, flush: true });
  renameSync(tmp, file);
}

/**
 * Starts a rotation of DATA_DIR's key: a new key becomes master.key and the one it replaces
 * master.key.previous, in an order that leaves a usable pair of files at every step (killed before the
 * last rename, master.key is still the key everything is sealed under). Then `ring` seals with the new
 * key and still opens with the old one.
 */
export function beginDataDirRotation(dataDir: string, ring: Keyring): void {
  const next = randomBytes(32);
  writeKey(keyFile(dataDir, 'next'), next);
  writeKey(keyFile(dataDir, 'previous'), ring.currentKey);
  renameSync(keyFile(dataDir, 'next'), keyFile(dataDir, 'current'));
  ring.rotateTo(next);
}

/** Ends it once nothing is left under the previous key: its file is deleted. */
export function endDataDirRotation(dataDir: string, ring: Keyring): void {
  rmSync(keyFile(dataDir, 'previous'), { force: true });
  ring.forgetPrevious();
}
