/**
 * The subscriptions feature's face: what other features may use of it. Billing renews and retries
 * through the subscription's one writer: its rows (`SubscriptionRow`), the `transition()` table and
 * when a subscription is due (`whenDue`), the shop's retry rules, the statements that apply a batch
 * of transitions, the charge subject and the charge lease. The hosted payment pages load and pay a
 * subscription's checkout, read the subscription and its first schedule; the checkout expiry sweep
 * has the pages that expired unpaid announced and their subscriptions ended. The cabinet lists,
 * shows and cancels subscriptions by their states. Nothing else of `subscriptions/` is for use
 * outside it (the composition root aside).
 */
export { UNANNOUNCED_PAGE } from './hosted-pages.js';
export {
  loadSubscriptionCheckout,
  paySubscriptionCheckout,
  type SubscriptionCheckout,
} from './hosted-payment.js';
export { announceExpiredPages } from './page-expiry.js';
export { getSubscription } from './read.js';
export {
  findSubscription,
  SUBSCRIPTION_STATES,
  type SubscriptionRow,
  type SubscriptionState,
} from './repository.js';
export { quietUntil, rulesFor } from './rules.js';
export { CHARGE_LEASE_MS, firstSchedule } from './schedule.js';
export { cancelSubscription } from './service.js';
export {
  type Applied,
  applyTransition,
  changeInstant,
  transitionsStatements,
  withChange,
} from './state.js';
export { subscriptionSubject } from './subject.js';
export { type Happened, transition, whenDue } from './transitions.js';
export type { Subscription } from './view.js';
