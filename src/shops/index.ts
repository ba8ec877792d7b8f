/**
 * The shops feature's face: what other features may use of it. Verbs find the shop they act for
 * (`shopById`, `shopsByIds` for a batch); the notification deliverer and the cabinet open a shop's
 * secrets (its secret key, its signing key, its webhook secret), the cabinet from the shop's row;
 * the cabinet and the control socket read and change a shop's settings and notification keys; the
 * control socket and the CLI create, list and check shops and rotate their keys; the test clock
 * moves a test shop's clock. Nothing else of `shops/` is for use outside it (the composition root
 * aside).
 */
export {
  confirmSigningKey,
  rotateSigningKey,
  rotateWebhookSecret,
  webhookSecretEnc,
} from './notification-keys.js';
export { findShopRow, listShopRows, MAX_SHOP_ID, moveShopClock, type ShopRow } from './repository.js';
export {
  type CreateShopInput,
  checkShopInput,
  createShop,
  hasNoShops,
  rotateShopKey,
  ShopInputError,
  shopById,
  shopByPublicKey,
  shopSecret,
  shopsByIds,
  signingKeyOf,
} from './service.js';
export { changeShopSettings, getShopSettings, type ShopSettingsView, settingsView } from './settings.js';
export { openWebhookSecret } from './webhook-secret.js';
