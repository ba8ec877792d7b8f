import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cardStamp } from '../../src/cards/vault.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Keyring, keyringOf, MasterKeyError, masterKeyId } from '../../src/crypto/keyring.js';
import { beginDataDirRotation, endDataDirRotation, resolveKeyring } from '../../src/crypto/master-key.js';
import { deriveKey } from '../../src/crypto/secretbox.js';

const hex = () => randomBytes(32).toString('hex');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('KOPEK_MASTER_KEY_PREVIOUS', () => {
  it('takes one or more previous keys beside KOPEK_MASTER_KEY', () => {
    const [a, b, c] = [hex(), hex(), hex()];
    const config = loadConfig({ KOPEK_MASTER_KEY: a, KOPEK_MASTER_KEY_PREVIOUS: `${b}, ${c.toUpperCase()}` });
    expect(config.masterKeyPrevious.map((k) => k.toString('hex'))).toEqual([b, c]);
    expect(loadConfig({ KOPEK_MASTER_KEY: a }).masterKeyPrevious).toEqual([]);
  });

  it.each([
    [{ KOPEK_MASTER_KEY: hex(), KOPEK_MASTER_KEY_PREVIOUS: 'abc' }, /64 hexadecimal characters each/],
    [{ KOPEK_MASTER_KEY: hex(), KOPEK_MASTER_KEY_PREVIOUS: `${hex()},` }, /64 hexadecimal characters each/],
    [{ KOPEK_MASTER_KEY_PREVIOUS: hex() }, /needs KOPEK_MASTER_KEY/],
  ])('refuses %o with a clear message', (env, message) => {
    expect(problems(env).join('\n')).toMatch(message);
  });

  it('refuses the current key repeated as a previous one', () => {
    const a = hex();
    expect(problems({ KOPEK_MASTER_KEY: a, KOPEK_MASTER_KEY_PREVIOUS: a.toUpperCase() })).toEqual([
      'KOPEK_MASTER_KEY_PREVIOUS must not repeat KOPEK_MASTER_KEY',
    ]);
  });
});

describe('the keyring', () => {
  it('opens under the key a value names; a damaged value is a clear error', () => {
    const a = randomBytes(32);
    const sealed = new Keyring(a).seal('card-vault', '4200000000000000', 'card:t');
    expect(sealed.startsWith(`k1:${masterKeyId(a)}:`)).toBe(true);
    const ring = new Keyring(randomBytes(32), [a]);
    expect(ring.open('card-vault', sealed, 'card:t').toString()).toBe('4200000000000000');
    expect(() => ring.open('card-vault', sealed, 'card:other')).toThrow(MasterKeyError);
    expect(() => ring.open('card-vault', sealed, 'card:other')).toThrow(/does not open: it is damaged/);
  });

  it('derives lookup keys from a bare key as before, and wants them loaded with several keys', () => {
    const a = randomBytes(32);
    const before = createHmac('sha256', deriveKey(a, 'card-stamp')).update('4200000000000000').digest('hex');
    expect(cardStamp(a, '4200000000000000')).toBe(before);
    expect(keyringOf(a)).toBe(keyringOf(a));
    expect(() => new Keyring(randomBytes(32), [a]).lookupKey('card-stamp')).toThrow(/was not loaded/);
  });
});

describe("the embedded store's key files", () => {
  it('a rotation keeps the replaced key as master.key.previous until it ends', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kopek-keys-'));
    dirs.push(dir);
    const config = { masterKey: undefined, masterKeyPrevious: [], dataDir: dir };
    const first = resolveKeyring(config);
    expect(first.generatedAt).toBe(join(dir, 'master.key'));
    const old = first.keyring.currentKey;
    beginDataDirRotation(dir, first.keyring);
    expect(first.keyring.previousKeys).toEqual([old]);
    // A restart in the middle finds both keys.
    const restarted = resolveKeyring(config).keyring;
    expect(restarted.currentId).toBe(first.keyring.currentId);
    expect(restarted.previousIds).toEqual([masterKeyId(old)]);
    expect(existsSync(join(dir, 'master.key.next'))).toBe(false);
    endDataDirRotation(dir, restarted);
    expect(existsSync(join(dir, 'master.key.previous'))).toBe(false);
    expect(resolveKeyring(config).keyring.previousIds).toEqual([]);
  });

  it('killed before the new key took over, the store still runs on the old key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kopek-keys-'));
    dirs.push(dir);
    const config = { masterKey: undefined, masterKeyPrevious: [], dataDir: dir };
    const { keyring } = resolveKeyring(config);
    const current = readFileSync(join(dir, 'master.key'), 'utf8');
    // As left by a rotation killed between writing the previous key and renaming the new one.
    writeFileSync(join(dir, 'master.key.next'), `${hex()}\n`);
    writeFileSync(join(dir, 'master.key.previous'), current);
    const after = resolveKeyring(config).keyring;
    expect(after.currentId).toBe(keyring.currentId);
    expect(after.previousIds).toEqual([]);
  });
});
