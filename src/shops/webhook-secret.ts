import { randomBytes } from 'node:crypto';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';

/**
 * A shop's webhook signing secret: the HMAC key of its notifications' Kopek-Signature header. It is
 * the shop's to see (GET /shop, the cabinet), like its public key, and is not its API key: it
 * proves a notification came from Kopek, and opens nothing. The HMAC key is the whole text, prefix
 * included, so a receiver uses it as shown.
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** 256 random bits, base64url: `whsec_` and 43 characters. */
export const newWebhookSecret = (): string =>
  `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

/** What seals webhook secrets (webhook_secret_enc, webhook_secret_prev_enc): a purpose of their own. */
export const WEBHOOK_SECRET_PURPOSE = 'shop-webhook-secret';

export const sealWebhookSecret = (masterKey: MasterKeys, secret: string): string =>
  keyringOf(masterKey).seal(WEBHOOK_SECRET_PURPOSE, secret);

export const openWebhookSecret = (masterKey: MasterKeys, sealed: string): string =>
  keyringOf(masterKey).open(WEBHOOK_SECRET_PURPOSE, sealed).toString('utf8');
