import type { ChargeFacts, SubscriptionFacts, TransactionFacts } from './messages.js';
import { mailLanguage } from './texts.js';

/**
 * Reads what an e-mail needs from an event's payload: the subscription or transaction as the API
 * showed it when the event happened. Payloads are stored JSON, so every read checks its type; a
 * missing part leaves the e-mail without it rather than failing the whole batch.
 */

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

// Deliberately strict: a value that could break a header or name several mailboxes is no address.
const ADDRESS = /^[^\s@<>,;"'()\\]+@[^\s@<>,;"'()\\]+\.[^\s@<>,;"'()\\]+$/;

/** `value` when it is one plain e-mail address, otherwise null. */
export function mailbox(value: unknown): string | null {
  return typeof value === 'string' && value.length <= 254 && ADDRESS.test(value) ? value : null;
}

export function customerAddress(sub: Json): string | null {
  return mailbox(obj(sub.customer)?.email);
}

export function subscriptionFacts(sub: Json): SubscriptionFacts {
  const plan = obj(sub.plan) ?? {};
  const customer = obj(sub.customer) ?? {};
  const name = [str(customer.first_name), str(customer.last_name)].filter(Boolean).join(' ');
  const receipt = Array.isArray(sub.receipt_text) ? sub.receipt_text : [];
  return {
    id: str(sub.id) ?? '',
    planTitle: str(plan.title) ?? '',
    currency: str(plan.currency) ?? '',
    customerName: name === '' ? null : name,
    language: mailLanguage(sub.language),
    receiptText: receipt.filter((line): line is string => typeof line === 'string'),
    activeTo: str(sub.active_to),
    renewAt: str(sub.renew_at),
    cancelReason: str(sub.cancel_reason),
    cancelledAt: str(sub.cancelled_at),
  };
}

/** The amounts of the subscription's plan: its regular charge and its trial's (0 without one). */
function planAmounts(sub: Json): { regular: number | null; trial: number } {
  const plan = obj(sub.plan) ?? {};
  return { regular: num(obj(plan.plan)?.amount), trial: num(obj(plan.trial)?.amount) ?? 0 };
}

/**
 * What the charge an event of the subscription announces was for. A trial's start charges the
 * trial's amount; activation and renewal the plan's. A final failure charged the trial's amount
 * only when it was the paid trial's own first charge: then nothing was ever paid and the
 * subscription never ran (no active_to); a failure after the trial charged the regular amount.
 */
export function subscriptionCharge(event: string, sub: Json): ChargeFacts {
  const last = obj(sub.last_transaction) ?? {};
  const { regular, trial } = planAmounts(sub);
  let amount = regular;
  if (event === 'trial_started.subscription') amount = trial;
  const neverRan = num(sub.paid_billing_cycles) === 0 && str(sub.active_to) === null;
  if ((event === 'failed.subscription' || event === 'error.subscription') && trial > 0 && neverRan)
    amount = trial;
  return { uid: str(last.uid), amount, at: str(last.created_at), message: str(last.message) };
}

/** The trial's amount: a trial that charged nothing has no receipt. */
export function trialAmount(sub: Json): number {
  return planAmounts(sub).trial;
}

export function transactionOf(payload: Json): Json | undefined {
  return obj(payload.transaction);
}

/** The subscription a transaction charged, when it was a subscription's charge. */
export function subscriptionIdOf(txn: Json): string | null {
  return str(obj(txn.additional_data)?.subscription_id);
}

export function transactionCharge(txn: Json): ChargeFacts {
  return {
    uid: str(txn.uid),
    amount: num(txn.amount),
    at: str(txn.created_at),
    message: str(txn.message),
  };
}

export function transactionFacts(txn: Json): TransactionFacts | undefined {
  const uid = str(txn.uid);
  const amount = num(txn.amount);
  const currency = str(txn.currency);
  if (uid === null || amount === null || currency === null) return undefined;
  return {
    uid,
    status: str(txn.status) ?? '',
    type: str(txn.type) ?? 'payment',
    amount,
    currency,
    description: str(txn.description),
    message: str(txn.message),
    trackingId: str(txn.tracking_id),
    createdAt: str(txn.created_at) ?? '',
    test: txn.test === true,
  };
}
