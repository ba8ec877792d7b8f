import type { Clock } from '../clock.js';
import { ApiError } from '../core/errors.js';
import type { MasterKeys } from '../crypto/keyring.js';
import type { Queryable } from '../db/db.js';
import {
  keepWebhookSecret,
  promotePendingSigningKey,
  replaceWebhookSecret,
  setPendingSigningKey,
} from './notification-keys-repository.js';
import { findShopRow, type ShopRow } from './repository.js';
import { generateSigningKeys, type SigningKeys, sealSigningKey } from './service.js';
import { newWebhookSecret, sealWebhookSecret } from './webhook-secret.js';

/**
 * The verbs of a shop's notification keys, for the API, the cabinet and the CLI alike: the webhook
 * signing secret (made on first use for shops older than it, rotated with 24 hours of overlap) and
 * the RSA key pair (a new one is shown first, and signs only once the shop confirms it).
 */

interface KeyDeps {
  db: Queryable;
  masterKey: MasterKeys;
}

/** Where a new key pair comes from: the services' maker when they have one (tests), else a fresh pair. */
interface KeyMaker {
  signingKeys?: () => SigningKeys;
}

/** First secrets being given in this process, by shop: the deliverers of one shop ask together. */
const giving = new Map<number, Promise<string>>();

/**
 * The shop's sealed webhook secret: `row`'s, or for a shop created before Kopek made them, a new one
 * stored now (once, whoever asks first; a shop that has one keeps it).
 */
export function webhookSecretEnc(
  deps: KeyDeps,
  row: { id: number; webhook_secret_enc: string | null },
): Promise<string> {
  if (row.webhook_secret_enc !== null) return Promise.resolve(row.webhook_secret_enc);
  let pending = giving.get(row.id);
  if (!pending) {
    pending = keepWebhookSecret(deps.db, row.id, sealWebhookSecret(deps.masterKey, newWebhookSecret()))
      .then((sealed) => {
        if (sealed === undefined) throw ApiError.notFound();
        return sealed;
      })
      .finally(() => giving.delete(row.id));
    giving.set(row.id, pending);
  }
  return pending;
}

/** A new webhook secret; the old one signs too for 24 hours. The shop's row after it. */
export async function rotateWebhookSecret(
  deps: KeyDeps & { clock: Clock },
  shopId: number,
): Promise<ShopRow> {
  const sealed = sealWebhookSecret(deps.masterKey, newWebhookSecret());
  const row = await replaceWebhookSecret(deps.db, shopId, sealed, deps.clock.now());
  if (!row) throw ApiError.notFound();
  return row;
}

/**
 * A new RSA key pair, pending: its public key is shown, and notifications stay signed with the
 * current key until the shop confirms. Rotating again replaces the pending pair.
 */
export async function rotateSigningKey(
  deps: KeyDeps & KeyMaker,
  shopId: number,
  keys: SigningKeys = (deps.signingKeys ?? generateSigningKeys)(),
): Promise<ShopRow> {
  const row = await setPendingSigningKey(
    deps.db,
    shopId,
    keys.publicKey,
    sealSigningKey(deps.masterKey, keys.privateKey),
  );
  if (!row) throw ApiError.notFound();
  return row;
}

/** The pending key pair signs from now on; 422 when there is none. */
export async function confirmSigningKey(deps: KeyDeps, shopId: number): Promise<ShopRow> {
  const row = await promotePendingSigningKey(deps.db, shopId);
  if (row) return row;
  if (!(await findShopRow(deps.db, shopId))) throw ApiError.notFound();
  throw ApiError.validation({
    pending_public_key: ["can't be confirmed: there is none (rotate the signing key first)"],
  });
}
