import type { MasterKeys } from '../../crypto/keyring.js';
import {
  KOPEK_SIGNATURE_HEADER,
  type NotificationView,
  notificationBody,
  sendsBasic,
  signHere,
} from '../../notifications/index.js';
import { type ShopRow, signingKeyOf } from '../../shops/index.js';

/**
 * The headers a notification goes with, as the deliverer builds them, for a shop checking its
 * receiver: the signature is RSA-SHA256 (PKCS #1 v1.5, deterministic) over the same bytes with the
 * key that signs now; the Kopek-Signature is the one the last attempt was sent with, as kept with
 * it. The Authorization header carries the secret key: it is named, when the deliverer sends it
 * (Basic chosen and an https URL), and never shown.
 */
export function signedHeaders(
  masterKey: MasterKeys,
  shop: Pick<ShopRow, 'private_key_enc' | 'secret_enc' | 'notification_auth'>,
  n: NotificationView,
  last: { at: string | undefined; kopekSignature: string | null },
  hidden: string,
): Array<[string, string]> {
  let signature: string;
  try {
    const body = notificationBody({ payload: n.payload });
    signature = signHere(signingKeyOf(masterKey, shop), body);
  } catch {
    signature = '—';
  }
  const timestamp = last.at === undefined ? '…' : String(Math.floor(new Date(last.at).getTime() / 1000));
  const headers: Array<[string, string]> = [
    ['Content-Type', 'application/json'],
    ['User-Agent', 'Kopek-Notifications/1'],
    ['Content-Signature', signature],
    [KOPEK_SIGNATURE_HEADER, last.kopekSignature ?? '…'],
    ['Kopek-Event-Id', n.id],
    ['Kopek-Timestamp', timestamp],
  ];
  if (shop.secret_enc !== null && sendsBasic(shop.notification_auth, n.url))
    headers.push(['Authorization', `Basic … (${hidden})`]);
  return headers;
}
