import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { PRIVATE_FILE_MODE, privateDataDir } from '../db/data-dir-mode.js';

/**
 * KOPEK_MASTER_KEY when set. In embedded mode without it, a key is generated once into
 * DATA_DIR/master.key (mode 0600) and reused: losing that file makes stored cards unreadable.
 */
export function resolveMasterKey(config: Pick<Config, 'masterKey' | 'dataDir'>): {
  key: Buffer;
  generatedAt?: string;
} {
  if (config.masterKey) return { key: config.masterKey };
  // Refuses a DATA_DIR others may write to before reading a key from it or writing one into it.
  privateDataDir(config.dataDir);
  const file = join(config.dataDir, 'master.key');
  if (existsSync(file)) {
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error(`${file} does not hold a 64-hex-character key`);
    return { key: Buffer.from(hex, 'hex') };
  }
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return { key, generatedAt: file };
}
