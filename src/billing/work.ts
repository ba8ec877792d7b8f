import type { Shop } from '../context.js';
import type { Plan } from '../plans/index.js';
import { CHARGE_LEASE_MS, type SubscriptionRow } from '../subscriptions/index.js';

/** How long a claimed attempt keeps others off before it is looked at again (resolved by query). */
export const LEASE_MS = CHARGE_LEASE_MS;

/** The outcome of an attempt another run took over before this one sent it: not charged here. */
export const LEASE_LOST = 'lease_lost';

export interface BillingSummary {
  charged: number;
  successful: number;
  failed: number;
  errors: number;
  unknown: number;
  /** Subscriptions that ended because their plan's billing cycles were all paid. */
  ended: number;
  /** Open attempts whose outcome a query settled (or proved they never reached the gateway). */
  resolved: number;
}

export interface BillingObserver {
  attempt?(outcome: string, seconds: number): void;
}

export const emptySummary = (): BillingSummary => ({
  charged: 0,
  successful: 0,
  failed: 0,
  errors: 0,
  unknown: 0,
  ended: 0,
  resolved: 0,
});

/** One claimed piece of work: an attempt to charge, or an open attempt to resolve by query. */
export interface Work {
  kind: 'charge' | 'resolve';
  /** The subscription as this run left it when claiming (its lease in renew_at). */
  sub: SubscriptionRow;
  plan: Plan;
  shop: Shop;
  period: number;
  attempt: number;
}

/** Counts a charge attempt's outcome into the run's summary. */
export function countCharge(summary: BillingSummary, outcome: string): void {
  // An attempt whose lease was lost was never sent: whoever took it over counts its charge.
  if (outcome === LEASE_LOST) return;
  summary.charged++;
  if (outcome === 'successful') summary.successful++;
  else if (outcome === 'failed') summary.failed++;
  else if (outcome === 'error' || outcome === 'refused') summary.errors++;
  else summary.unknown++;
}
