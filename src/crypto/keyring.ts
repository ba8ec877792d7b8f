import { deriveKey, open, seal } from './secretbox.js';

/**
 * The master keys a process holds: the current one, which seals everything new, and the previous
 * ones, still accepted for opening while `kopek keys rotate` re-seals what they sealed.
 *
 * A value sealed here says which key sealed it: `k1:<key id>:<base64 of iv | tag | ciphertext>`.
 * Values sealed before key ids existed are bare base64 (no `:`); they are opened by trying the current
 * key, then each previous one (AES-GCM authenticates, so a wrong key fails cleanly).
 */

const FORMAT = 'k1';
const PREFIXED = /^k1:([0-9a-f]{8}):(.*)$/s;

/** A value that opens under none of the master keys this process holds. */
export class MasterKeyError extends Error {}

/** A master key's id: 8 hex characters derived from it, safe to show and to store with values. */
export function masterKeyId(key: Buffer): string {
  return deriveKey(key, 'master-key-id').subarray(0, 4).toString('hex');
}

class MasterKey {
  readonly id: string;
  readonly #derived = new Map<string, Buffer>();
  constructor(readonly key: Buffer) {
    this.id = masterKeyId(key);
  }
  /** The purpose's key, derived once per process. */
  derive(purpose: string): Buffer {
    let k = this.#derived.get(purpose);
    if (!k) {
      k = deriveKey(this.key, purpose);
      this.#derived.set(purpose, k);
    }
    return k;
  }
}

export class Keyring {
  #current: MasterKey;
  #previous: MasterKey[];
  readonly #lookup = new Map<string, Buffer>();

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    this.#current = new MasterKey(current);
    this.#previous = distinct(
      this.#current,
      previous.map((k) => new MasterKey(k)),
    );
  }

  get currentId(): string {
    return this.#current.id;
  }

  get previousIds(): string[] {
    return this.#previous.map((k) => k.id);
  }

  /** The previous keys themselves (for the embedded store's key file). */
  get previousKeys(): Buffer[] {
    return this.#previous.map((k) => k.key);
  }

  get currentKey(): Buffer {
    return this.#current.key;
  }

  /** Seals under the current key, for `purpose` (each purpose has its own derived key). */
  seal(purpose: string, plaintext: string | Buffer, aad = ''): string {
    const k = this.#current;
    return `${FORMAT}:${k.id}:${seal(k.derive(purpose), plaintext, aad)}`;
  }

  /** Opens a value sealed under any key of the ring; a MasterKeyError says which key it needs. */
  open(purpose: string, sealed: string, aad = ''): Buffer {
    const m = PREFIXED.exec(sealed);
    if (m) {
      const [, id, body] = m as unknown as [string, string, string];
      const k = this.#byId(id);
      if (!k)
        throw new MasterKeyError(
          `a value is sealed under master key ${id}, which is neither KOPEK_MASTER_KEY (${this.currentId}) nor in KOPEK_MASTER_KEY_PREVIOUS`,
        );
      try {
        return open(k.derive(purpose), body, aad);
      } catch {
        throw new MasterKeyError(`a value sealed under master key ${id} does not open: it is damaged`);
      }
    }
    for (const k of [this.#current, ...this.#previous]) {
      try {
        return open(k.derive(purpose), sealed, aad);
      } catch {
        // Authentication failed: not this key; try the next one.
      }
    }
    throw new MasterKeyError(
      `a value sealed before master key ids opens under none of the master keys given (${this.#allIds()}): is KOPEK_MASTER_KEY the key this store was created with?`,
    );
  }

  /** The id of the key that sealed `sealed`, or undefined for a value sealed before key ids. */
  static keyIdOf(sealed: string): string | undefined {
    return PREFIXED.exec(sealed)?.[1];
  }

  /** What every value sealed under the current key starts with. */
  get currentPrefix(): string {
    return `${FORMAT}:${this.currentId}:`;
  }

  /**
   * The HMAC key of a lookup value (a card's stamp, a request's fingerprint). Lookup keys do not
   * rotate: they are pinned once (lookup-keys.ts) and kept sealed in the store, so values computed
   * before a rotation still match. Unpinned, a ring of one key derives them from it, as Kopek always did.
   */
  lookupKey(purpose: string): Buffer {
    const pinned = this.#lookup.get(purpose);
    if (pinned) return pinned;
    if (this.#previous.length > 0)
      throw new Error(`the lookup key "${purpose}" was not loaded from the store (openKeyring)`);
    return this.#current.derive(purpose);
  }

  pinLookupKey(purpose: string, key: Buffer): void {
    this.#lookup.set(purpose, key);
  }

  hasLookupKey(purpose: string): boolean {
    return this.#lookup.has(purpose);
  }

  /** Each key of the ring, the current first. */
  get keys(): Buffer[] {
    return [this.#current.key, ...this.previousKeys];
  }

  /** The embedded store's rotation: `next` seals from now on, the current key is still accepted. */
  rotateTo(next: Buffer): void {
    const was = this.#current;
    this.#current = new MasterKey(next);
    this.#previous = distinct(this.#current, [was, ...this.#previous]);
  }

  /** Drops the previous keys once nothing is left sealed under them. */
  forgetPrevious(): void {
    this.#previous = [];
  }

  #byId(id: string): MasterKey | undefined {
    if (id === this.#current.id) return this.#current;
    return this.#previous.find((k) => k.id === id);
  }

  #allIds(): string {
    return [this.#current, ...this.#previous].map((k) => k.id).join(', ');
  }
}

function distinct(current: MasterKey, keys: MasterKey[]): MasterKey[] {
  const seen = new Set([current.id]);
  return keys.filter((k) => !seen.has(k.id) && seen.add(k.id));
}

/** What code that seals or opens accepts: a keyring, or one bare master key (a ring of one). */
export type MasterKeys = Keyring | Buffer;

const rings = new WeakMap<Buffer, Keyring>();

/** The keyring of `keys`: a bare key gets one ring per process, so its caches are shared. */
export function keyringOf(keys: MasterKeys): Keyring {
  if (keys instanceof Keyring) return keys;
  let ring = rings.get(keys);
  if (!ring) {
    ring = new Keyring(keys);
    rings.set(keys, ring);
  }
  return ring;
}
