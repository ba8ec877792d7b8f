import { randomBytes } from 'node:crypto';
import { deriveKey, open, seal } from '../crypto/secretbox.js';

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

/** The key that seals webhook secrets (webhook_secret_enc, webhook_secret_prev_enc): its own purpose. */
const webhookSecretKey = (masterKey: Buffer) => deriveKey(masterKey, 'shop-webhook-secret');

export const sealWebhookSecret = (masterKey: Buffer, secret: string): string =>
  seal(webhookSecretKey(masterKey), secret);

export const openWebhookSecret = (masterKey: Buffer, sealed: string): string =>
  open(webhookSecretKey(masterKey), sealed).toString('utf8');
