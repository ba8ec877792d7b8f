/**
 * The checkout feature's face: what other features may use of it. A test clock's advance announces
 * the expiry of the shop's payment pages as it passes them: it stops where the next one expires
 * (`nextExpiryOfShop`) and sweeps them (`sweepExpiredCheckouts`). Nothing else of `checkout/` is for
 * use outside it (the composition root aside).
 */
export { nextExpiryOfShop, sweepExpiredCheckouts } from './expiry.js';
