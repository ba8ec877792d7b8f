import { createHash, generateKeyPairSync, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Authenticated } from '../context.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import { gatewayServiceSecret } from '../crypto/service-credential.js';
import type { Db, Queryable } from '../db/db.js';
import { isUniqueViolation } from '../db/db.js';
import {
  countShops,
  findShopRow,
  findShopRowByPublicKey,
  findShopRows,
  insertShop,
  MAX_SHOP_ID,
  replaceShopSecret,
  type Shop,
  type ShopRow,
  shopClockOffset,
  toShop,
} from './repository.js';
import { newWebhookSecret, sealWebhookSecret } from './webhook-secret.js';

export interface CreateShopInput {
  id?: number;
  secret?: string;
  name?: string;
  threeDs?: boolean;
  test?: boolean;
  /** A ready notification-signing key pair (PEM); one is generated when absent. */
  signingKeys?: SigningKeys;
}

export interface SigningKeys {
  publicKey: string;
  privateKey: string;
}

/** A fresh RSA key pair for signing a shop's notifications (Content-Signature, RSA-SHA256). */
export function generateSigningKeys(): SigningKeys {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

export interface CreatedShop {
  shop: Shop;
  /** Shown once; stored as a hash (to authenticate) and sealed (for notifications' HTTP Basic). */
  secret: string;
}

export class ShopInputError extends Error {}

/** A shop by its id, as verbs see it; undefined when there is none. */
export async function shopById(db: Queryable, id: number): Promise<Shop | undefined> {
  const row = await findShopRow(db, id);
  return row && toShop(row);
}

/**
 * The shop whose public key has the base64 body `key` (as GET /shop answers `public_key_base64`, the
 * platform widget's `public_key`); a PEM is taken too.
 */
export async function shopByPublicKey(db: Queryable, key: string): Promise<Shop | undefined> {
  const body = key.replace(/-----[A-Z ]+-----|\s/g, '');
  if (!/^[A-Za-z0-9+/]{40,2048}={0,2}$/.test(body)) return undefined;
  const row = await findShopRowByPublicKey(db, body);
  return row && toShop(row);
}

/** The shops of `ids` that exist, as verbs see them, by id: for a batch acting for several shops. */
export async function shopsByIds(db: Queryable, ids: number[]): Promise<Map<number, Shop>> {
  const rows = await findShopRows(db, ids);
  return new Map(rows.map((r) => [r.id, toShop(r)]));
}

/** Whether the store has no shop yet (a first start). */
export const hasNoShops = async (db: Db): Promise<boolean> => (await countShops(db)) === 0;

/**
 * The secret is 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force,
 * and a slow hash would cost every API request.
 */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * What seals shops' secret keys and signing keys: each its own purpose, so it opens nothing else
 * (sealed-columns.ts lists shops.secret_enc and shops.private_key_enc with them).
 */
const SECRET = 'shop-secret-key';
const SIGNING = 'shop-signing-key';

/**
 * The shop's secret key, for HTTP Basic on its notifications; undefined for a shop created before
 * Kopek kept a sealed copy (it gets one with its next key).
 */
export function shopSecret(masterKey: MasterKeys, row: Pick<ShopRow, 'secret_enc'>): string | undefined {
  if (row.secret_enc === null) return undefined;
  return keyringOf(masterKey).open(SECRET, row.secret_enc).toString('utf8');
}

/**
 * Gives a shop a new random secret key and answers it (shown once): the old key stops working, and
 * its notifications carry the new one from then on. Undefined when there is no such shop.
 */
export async function rotateShopKey(
  deps: { db: Db; masterKey: MasterKeys },
  shopId: number,
): Promise<string | undefined> {
  const secret = randomBytes(32).toString('hex');
  const done = await replaceShopSecret(
    deps.db,
    shopId,
    hashSecret(secret),
    keyringOf(deps.masterKey).seal(SECRET, secret),
  );
  return done ? secret : undefined;
}

/** The CLI calls this before opening the store, so a mistyped option fails at once. */
export function checkShopInput(input: CreateShopInput): void {
  if (input.id !== undefined && (!Number.isSafeInteger(input.id) || input.id < 1 || input.id > MAX_SHOP_ID)) {
    throw new ShopInputError(`--id must be a whole number from 1 to ${MAX_SHOP_ID}`);
  }
  if (input.secret !== undefined) checkChosenSecret(input.secret);
}

/** Different byte values a chosen secret key must hold at least (of its 32). */
export const MIN_SECRET_DISTINCT_BYTES = 16;

/**
 * A secret key chosen by hand (`--secret`) must be as good as a generated one: 64 hexadecimal
 * characters, i.e. 32 bytes, of which at least 16 differ. Counting bytes, not characters: hex has
 * only 16 characters, and a quarter of truly random keys lack one of them, while 32 random bytes
 * practically never repeat so much. Repeated patterns (`00…`, `abab…`, `0123…f0123…f`) fail.
 */
function checkChosenSecret(secret: string): void {
  const advice = 'use 32 random bytes, e.g. from `openssl rand -hex 32`';
  if (!/^[0-9a-f]{64}$/i.test(secret))
    throw new ShopInputError(
      `--secret must be 64 hexadecimal characters (32 bytes), got ${secret.length} characters: ${advice}`,
    );
  const distinct = new Set(Buffer.from(secret, 'hex')).size;
  if (distinct < MIN_SECRET_DISTINCT_BYTES)
    throw new ShopInputError(
      `--secret is too weak: its 32 bytes hold only ${distinct} different values, and at least ${MIN_SECRET_DISTINCT_BYTES} are needed; ${advice}`,
    );
}

export async function createShop(
  deps: { db: Db; clock: Clock; masterKey: MasterKeys; signingKeys?: () => SigningKeys },
  input: CreateShopInput,
): Promise<CreatedShop> {
  checkShopInput(input);
  const secret = (input.secret ?? randomBytes(32).toString('hex')).toLowerCase();
  const { publicKey, privateKey } = input.signingKeys ?? (deps.signingKeys ?? generateSigningKeys)();
  try {
    const row = await deps.db.tx((tx) =>
      insertShop(tx, {
        id: input.id,
        name: input.name ?? 'Sandbox shop',
        secretHash: hashSecret(secret),
        test: input.test ?? false,
        threeDs: input.threeDs ?? false,
        publicKey,
        privateKeyEnc: sealSigningKey(deps.masterKey, privateKey),
        secretEnc: keyringOf(deps.masterKey).seal(SECRET, secret),
        webhookSecretEnc: sealWebhookSecret(deps.masterKey, newWebhookSecret()),
        createdAt: deps.clock.now(),
      }),
    );
    return { shop: toShop(row), secret };
  } catch (err) {
    if (isUniqueViolation(err)) throw new ShopInputError(`a shop with id ${input.id} already exists`);
    throw err;
  }
}

/** A private key (PEM) sealed as private_key_enc and pending_private_key_enc hold it. */
export const sealSigningKey = (masterKey: MasterKeys, pem: string) => keyringOf(masterKey).seal(SIGNING, pem);

/** The private key (PEM) that signs the notifications of the shop of `row`. */
export function signingKeyOf(masterKey: MasterKeys, row: Pick<ShopRow, 'private_key_enc'>): string {
  return keyringOf(masterKey).open(SIGNING, row.private_key_enc).toString('utf8');
}

/** The shop's private key for signing notifications. */
export async function shopSigningKey(
  db: Db,
  masterKey: MasterKeys,
  shopId: number,
): Promise<string | undefined> {
  const row = await findShopRow(db, shopId);
  return row && signingKeyOf(masterKey, row);
}

interface CachedShop {
  secretHash: Buffer;
  shop: Shop;
  until: number;
}

/**
 * Checks HTTP Basic credentials. Shop rows are cached for a few seconds per process so that
 * authentication does not cost a query on every request; a changed key takes effect within that time.
 */
export class ShopAuthenticator {
  readonly #cache = new Map<number, CachedShop>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 5000,
    /** GATEWAY_TOKEN: when set, routes that allow it also accept the shop's derived gateway credential. */
    private readonly gatewayToken?: string,
  ) {}

  async authenticate(
    shopId: string,
    secret: string,
    allowService = false,
  ): Promise<Authenticated | undefined> {
    if (!/^\d{1,10}$/.test(shopId)) return undefined;
    const id = Number(shopId);
    if (id > MAX_SHOP_ID) return undefined;
    let entry = this.#cache.get(id);
    const now = performance.now();
    const fresh = !entry || entry.until < now;
    if (!entry || fresh) {
      const row = await findShopRow(this.db, id);
      if (!row) {
        this.#cache.delete(id);
        // Spend a comparison anyway so unknown ids and wrong keys take the same time.
        timingSafeEqual(Buffer.alloc(32), Buffer.alloc(32));
        return undefined;
      }
      entry = { secretHash: Buffer.from(row.secret_hash, 'hex'), shop: toShop(row), until: now + this.ttlMs };
      this.#cache.set(id, entry);
    }
    // One-shot hashing: this runs on every authenticated request.
    const given = hash('sha256', secret, 'buffer');
    const own = timingSafeEqual(given, entry.secretHash);
    let service = false;
    if (!own && allowService && this.gatewayToken) {
      const derived = createHash('sha256').update(gatewayServiceSecret(this.gatewayToken, id)).digest();
      service = timingSafeEqual(given, derived);
    }
    if (!own && !service) return undefined;
    if (entry.shop.test && !fresh) await this.#currentClock(id, entry);
    return { shop: entry.shop, service };
  }

  /**
   * A test shop's clock is read on every request, never taken from the cache: another instance may
   * have advanced it a moment ago, and a request stamped with the old offset would act in the shop's
   * past (a cancellation dated before a renewal it follows). One primary-key read, for test shops only.
   */
  async #currentClock(id: number, entry: CachedShop): Promise<void> {
    const offset = await shopClockOffset(this.db, id);
    if (offset !== undefined && offset !== entry.shop.clockOffsetMs)
      entry.shop = { ...entry.shop, clockOffsetMs: offset };
  }

  forget(shopId: number): void {
    this.#cache.delete(shopId);
  }
}
