import type { Services } from '../../context.js';
import { confirmSigningKey, rotateSigningKey, rotateWebhookSecret } from '../../shops/index.js';
import type { signingTexts } from './signing-texts.js';

/**
 * The settings page's buttons on the shop's notification keys: where each posts, the verb it calls
 * (the API's POST /shop/webhook_secret/rotate, /shop/signing_key/rotate and /confirm), and what
 * the page says after it.
 */
export const keyActions: ReadonlyArray<{
  path: string;
  verb: (services: Services, shopId: number) => Promise<unknown>;
  done: string;
  notice: keyof ReturnType<typeof signingTexts>;
}> = [
  { path: 'webhook-secret', verb: rotateWebhookSecret, done: 'secret-rotated', notice: 'secretRotated' },
  {
    path: 'signing-key',
    verb: (services, id) => rotateSigningKey(services, id),
    done: 'key-rotated',
    notice: 'keyRotated',
  },
  { path: 'signing-key/confirm', verb: confirmSigningKey, done: 'key-confirmed', notice: 'keyConfirmed' },
];
