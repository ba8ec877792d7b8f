import type { Queryable } from '../db/db.js';
import type { ShopRow } from './repository.js';

/** The SQL behind a shop's notification keys: its webhook signing secret and its RSA key pair. */

/**
 * Keeps `sealed` as the shop's webhook secret unless it already has one, and answers the one it has
 * now: of two processes giving an older shop its first secret at once, the first one's stays.
 */
export async function keepWebhookSecret(
  db: Queryable,
  id: number,
  sealed: string,
): Promise<string | undefined> {
  const [row] = await db.query<{ webhook_secret_enc: string }>(
    `UPDATE shops SET webhook_secret_enc = COALESCE(webhook_secret_enc, $2) WHERE id = $1
     RETURNING webhook_secret_enc`,
    [id, sealed],
  );
  return row?.webhook_secret_enc;
}

/**
 * A new webhook secret; the one it replaces keeps signing beside it for 24 hours of the shop's clock
 * (real time `now` plus a test shop's offset, as the deliverers reckon it). A secret replaced before
 * its own 24 hours were up stops signing now.
 */
export async function replaceWebhookSecret(
  db: Queryable,
  id: number,
  sealed: string,
  now: Date,
): Promise<ShopRow | undefined> {
  const [row] = await db.query<ShopRow>(
    `UPDATE shops SET webhook_secret_prev_enc = webhook_secret_enc,
       webhook_secret_prev_until = CASE WHEN webhook_secret_enc IS NULL THEN NULL
         ELSE $3::timestamptz + clock_offset_ms * interval '1 millisecond' + interval '24 hours' END,
       webhook_secret_enc = $2
     WHERE id = $1 RETURNING *`,
    [id, sealed, now],
  );
  return row;
}

/** Keeps a new key pair beside the one that signs (replacing an earlier pending one). */
export async function setPendingSigningKey(
  db: Queryable,
  id: number,
  publicKey: string,
  privateKeyEnc: string,
): Promise<ShopRow | undefined> {
  const [row] = await db.query<ShopRow>(
    `UPDATE shops SET pending_public_key = $2, pending_private_key_enc = $3 WHERE id = $1 RETURNING *`,
    [id, publicKey, privateKeyEnc],
  );
  return row;
}

/** The pending key pair becomes the one that signs; undefined when the shop has none pending. */
export async function promotePendingSigningKey(db: Queryable, id: number): Promise<ShopRow | undefined> {
  const [row] = await db.query<ShopRow>(
    `UPDATE shops SET public_key = pending_public_key, private_key_enc = pending_private_key_enc,
       pending_public_key = NULL, pending_private_key_enc = NULL
     WHERE id = $1 AND pending_public_key IS NOT NULL RETURNING *`,
    [id],
  );
  return row;
}
