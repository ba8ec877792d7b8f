/**
 * The subscriptions feature's face: what other features may use of it. Billing renews and retries
 * through the subscription's one writer: its rows (`SubscriptionRow`), the `transition()` table and
 * when a subscription is due (`whenDue`), the shop's retry rules, the statements that apply a batch
 * of transitions, the charge subject and the charge lease. The hosted payment pages load and pay a
 * subscription's checkout, read the subscription and its first schedule, and the checkout expiry
 * sweep claims expired pages and ends their subscriptions. The cabinet lists, shows and cancels
 * subscriptions by their states. Nothing else of `subscriptions/` is for use outside it (the
 * composition root aside).
 */

export { claimExpiredCheckouts, UNANNOUNCED_PAGE } from './hosted-pages.js';
export {
  loadSubscriptionCheckout,
  paySubscriptionCheckout,
  type SubscriptionCheckout,
} from './hosted-payment.js';
export { getSubscription } from './read.js';
export {
  findSubscription,
  lockSubscription,
  SUBSCRIPTION_STATES,
  type SubscriptionRow,
  type SubscriptionState,
} from './repository.js';
export { rulesFor } from './rules.js';
export { CHARGE_LEASE_MS, firstSchedule } from './schedule.js';
export { cancelSubscription } from './service.js';
export {
  type Applied,
  applyTransition,
  changedRow,
  changeInstant,
  transitionsStatements,
  withChange,
} from './state.js';
export { subscriptionSubject } from './subject.js';
export { type Happened, transition, whenDue } from './transitions.js';
export { type Subscription, toSubscription } from './view.js';
