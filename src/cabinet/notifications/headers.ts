import type { MasterKeys } from '../../crypto/keyring.js';
import { notificationBody } from '../../notifications/attempt.js';
import type { NotificationView } from '../../notifications/service.js';
import { signHere } from '../../notifications/signer.js';
import type { ShopRow } from '../../shops/repository.js';
import { signingKeyOf } from '../../shops/service.js';

/**
 * The headers a notification goes with, as the deliverer builds them, for a shop checking its
 * receiver: the signature is RSA-SHA256 (PKCS #1 v1.5, deterministic) over the same bytes, so it is
 * exactly the one sent. The Authorization header carries the secret key and is never shown.
 */
export function signedHeaders(
  masterKey: MasterKeys,
  shop: Pick<ShopRow, 'private_key_enc' | 'secret_enc'>,
  n: NotificationView,
  lastAttemptAt: string | undefined,
  hidden: string,
): Array<[string, string]> {
  let signature: string;
  try {
    const body = notificationBody({ payload: n.payload });
    signature = signHere(signingKeyOf(masterKey, shop), body);
  } catch {
    signature = '—';
  }
  const timestamp =
    lastAttemptAt === undefined ? '…' : String(Math.floor(new Date(lastAttemptAt).getTime() / 1000));
  const headers: Array<[string, string]> = [
    ['Content-Type', 'application/json'],
    ['User-Agent', 'Kopek-Notifications/1'],
    ['Content-Signature', signature],
    ['Kopek-Event-Id', n.id],
    ['Kopek-Timestamp', timestamp],
  ];
  if (shop.secret_enc !== null) headers.push(['Authorization', `Basic … (${hidden})`]);
  return headers;
}
