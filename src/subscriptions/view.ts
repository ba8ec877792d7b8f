import type { CardRecord } from '../cards/index.js';
import type { TransactionSummary } from '../charging/index.js';
import { isoString } from '../clock.js';
import { type Customer, type CustomerRow, toCustomer } from '../customers/index.js';
import type { Plan } from '../plans/index.js';
import type { SubscriptionRow } from './repository.js';
import { cyclesDone } from './schedule.js';

export { summarize, type TransactionSummary } from '../charging/index.js';

export interface Subscription {
  id: string;
  state: string;
  tracking_id: string | null;
  device_id: string | null;
  created_at: string;
  updated_at: string;
  renew_at: string | null;
  active_to: string | null;
  card: CardRecord | Record<string, never>;
  customer: Customer | Reference | Record<string, never>;
  paid_billing_cycles: number;
  number_failed_payment_attempts: number;
  additional_data: Record<string, unknown>;
  plan: Plan | Reference;
  last_transaction: TransactionSummary | null;
  return_url: string | null;
  notification_url: string | null;
  receipt_text: string[] | null;
  avs_cvc_verification: Record<string, unknown> | null;
  settings: Record<string, unknown> | null;
  language: string;
  dynamic_billing_descriptor: string | null;
  redirect_url?: string;
  token?: string;
  cancel_reason?: string | null;
  cancelled_at?: string;
  transaction?: TransactionSummary | null;
}

/**
 * A plan or customer the subscription names but the store does not have. The store refuses to delete
 * either, so only damage gets there; the subscription still reads, naming the missing part by id (as
 * a request names an existing one), rather than every read of it failing.
 */
export interface Reference {
  id: string;
}

export interface SubscriptionParts {
  row: SubscriptionRow;
  /** Undefined only when the plan's row is missing. */
  plan: Plan | undefined;
  /** Undefined without a customer, or when the customer's row is missing. */
  customer: CustomerRow | undefined;
  /** The hosted page of the redirect variant, while the customer has not paid there. */
  checkout: { url: string; token: string } | undefined;
}

const iso = (d: Date | null) => (d ? isoString(d) : null);
const IN_FLIGHT = new Set(['processing', 'trial_processing', 'redirecting']);

export function toSubscription(p: SubscriptionParts): Subscription {
  const { row } = p;
  const last = row.last_transaction;
  return {
    id: row.id,
    state: row.state,
    tracking_id: row.tracking_id,
    device_id: row.device_id,
    created_at: isoString(row.created_at),
    updated_at: isoString(row.updated_at),
    // A finite plan whose cycles are all paid renews no more (it is due only to end); while a charge
    // is in flight, renew_at is the engine's lease, not a renewal.
    renew_at: IN_FLIGHT.has(row.state) || (p.plan && cyclesDone(row, p.plan)) ? null : iso(row.renew_at),
    active_to: iso(row.active_to),
    card: row.card ?? {},
    customer: p.customer ? toCustomer(p.customer) : row.customer_id ? { id: row.customer_id } : {},
    paid_billing_cycles: row.paid_billing_cycles,
    number_failed_payment_attempts: row.number_failed_payment_attempts,
    additional_data: row.additional_data,
    plan: p.plan ?? { id: row.plan_id },
    last_transaction: last,
    return_url: row.return_url,
    notification_url: row.notification_url,
    receipt_text: row.receipt_text,
    avs_cvc_verification: row.avs_cvc_verification,
    settings: row.settings,
    language: row.language,
    dynamic_billing_descriptor: row.dynamic_billing_descriptor,
    ...(p.checkout ? { redirect_url: p.checkout.url, token: p.checkout.token } : {}),
    ...(row.cancelled_at
      ? { cancel_reason: row.cancel_reason, cancelled_at: isoString(row.cancelled_at), transaction: last }
      : {}),
  };
}
