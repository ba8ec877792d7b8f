import type { ChargeRequest } from '../gateway/client.js';
import type { Plan } from '../plans/service.js';
import { chargeDescription } from '../subscriptions/charge.js';
import type { SubscriptionRow } from '../subscriptions/repository.js';
import { chargeTrackingId } from '../subscriptions/settle.js';

/** The gateway payment of a renewal attempt: the stored card, no cardholder present. */
export function renewalRequest(
  sub: SubscriptionRow,
  plan: Plan,
  period: number,
  attempt: number,
): ChargeRequest {
  return {
    amount: plan.plan.amount,
    currency: plan.currency,
    description: chargeDescription(plan.title, sub.id),
    tracking_id: chargeTrackingId(sub.id, period, attempt),
    language: sub.language,
    test: plan.test,
    // The attempt's key already makes a repeat impossible.
    duplicate_check: false,
    // A merchant-initiated charge of a stored card: nobody is there to pass 3-D Secure.
    credit_card: { token: sub.card_token as string, skip_three_d_secure_verification: true },
    additional_data: { subscription_id: sub.id, billing_period: period, attempt },
  };
}
