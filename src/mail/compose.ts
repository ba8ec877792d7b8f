import type { Shop } from '../context.js';
import {
  customerAddress,
  mailbox,
  subscriptionCharge,
  subscriptionFacts,
  subscriptionIdOf,
  transactionCharge,
  transactionFacts,
  transactionOf,
  trialAmount,
} from './facts.js';
import { canceledMessage, failedMessage, receiptMessage, transactionMessage } from './messages.js';
import type { Message } from './render.js';

/**
 * Which e-mails an event of the outbox calls for, and what they say. Nothing here reads the store
 * or the clock: the fan-out passes the event, the shop's settings as they are now, and (for a
 * transaction that charged a subscription) the subscription as the outbox last announced it.
 *
 * - to the customer, when the subscription's customer has an e-mail address:
 *   - `receipt`: activated, renewed, and trial_started with a paid trial (each a successful charge);
 *   - `payment_failed`: a subscription's charge failed or errored: from the failed or errored
 *     transaction (every attempt, retries included), or from failed/error.subscription when this
 *     store has no transaction event (the gateway runs elsewhere); both name the same charge, so
 *     whichever comes first makes the one e-mail;
 *   - `canceled`: canceled.subscription, whoever or whatever ended it;
 * - to the shop's notification_email: `transaction`, every transaction that reached a final status
 *   (successful, failed, error).
 *
 * Nothing at all when the shop has e-mail notifications off.
 */

export type MailKind = 'receipt' | 'payment_failed' | 'canceled' | 'transaction';

export interface Draft {
  kind: MailKind;
  /** With kind, what makes an e-mail unique in its shop: one e-mail per charge, cancellation, event. */
  about: string;
  to: string;
  message: Message;
}

export interface OutboxEvent {
  id: number;
  shop_id: number;
  resource_type: string;
  resource_id: string;
  event: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

const CHARGED = new Set(['activated.subscription', 'renewed.subscription', 'trial_started.subscription']);
const FAILED_SUBSCRIPTION = new Set(['failed.subscription', 'error.subscription']);
const FINAL_TRANSACTION = new Set(['successful', 'failed', 'error']);
const FAILED_TRANSACTION = new Set(['failed', 'error']);

/** The transaction events that may call for a customer's notice: the fan-out looks up their subscription. */
export function chargedSubscription(e: OutboxEvent): string | null {
  if (e.resource_type !== 'transaction') return null;
  const txn = transactionOf(e.payload);
  if (!txn || !FAILED_TRANSACTION.has(String(txn.status))) return null;
  return subscriptionIdOf(txn);
}

export function draftsFor(
  e: OutboxEvent,
  shop: Pick<Shop, 'name' | 'timeZone' | 'emailNotifications' | 'notificationEmail'>,
  subscription?: Record<string, unknown>,
): Draft[] {
  if (!shop.emailNotifications) return [];
  const facts = { name: shop.name, timeZone: shop.timeZone };
  if (e.resource_type === 'subscription') return subscriptionDrafts(e, facts);
  if (e.resource_type !== 'transaction') return [];
  const txn = transactionOf(e.payload);
  if (!txn) return [];
  const drafts: Draft[] = [];
  const shopTo = mailbox(shop.notificationEmail);
  const notice = transactionFacts(txn);
  if (shopTo && notice && FINAL_TRANSACTION.has(notice.status)) {
    const message = transactionMessage(facts, notice);
    drafts.push({ kind: 'transaction', about: String(e.id), to: shopTo, message });
  }
  const customerTo = subscription ? customerAddress(subscription) : null;
  if (subscription && customerTo && chargedSubscription(e)) {
    const charge = transactionCharge(txn);
    const message = failedMessage(facts, subscriptionFacts(subscription), charge);
    drafts.push({ kind: 'payment_failed', about: charge.uid ?? `event ${e.id}`, to: customerTo, message });
  }
  return drafts;
}

function subscriptionDrafts(e: OutboxEvent, shop: { name: string; timeZone: string }): Draft[] {
  const to = customerAddress(e.payload);
  if (!to) return [];
  const sub = subscriptionFacts(e.payload);
  if (CHARGED.has(e.event)) {
    if (e.event === 'trial_started.subscription' && trialAmount(e.payload) <= 0) return [];
    const charge = subscriptionCharge(e.event, e.payload);
    const message = receiptMessage(shop, sub, charge);
    return [{ kind: 'receipt', about: charge.uid ?? `event ${e.id}`, to, message }];
  }
  if (FAILED_SUBSCRIPTION.has(e.event)) {
    const charge = subscriptionCharge(e.event, e.payload);
    const message = failedMessage(shop, sub, charge);
    return [{ kind: 'payment_failed', about: charge.uid ?? `event ${e.id}`, to, message }];
  }
  if (e.event === 'canceled.subscription') {
    return [{ kind: 'canceled', about: sub.id, to, message: canceledMessage(shop, sub) }];
  }
  return [];
}
