import { addInterval } from '../billing/interval.js';
import type { TransactionAnswer } from '../gateway/client.js';
import type { Plan } from '../plans/service.js';
import type { SubscriptionChange, SubscriptionRow, SubscriptionState } from './repository.js';
import { summarize } from './view.js';

/** Period 0 is the trial charge; regular periods count from 1. */
export const TRIAL_PERIOD = 0;

export interface FirstSchedule {
  state: SubscriptionState;
  /** Regular periods are counted from here: the start, or the end of the trial. */
  anchor: Date;
  /** The day of month that month and year periods keep (see billing_day in the migration). */
  anchorDay: number;
  renewAt: Date | null;
  activeTo: Date | null;
  /** The charge to take now, if any: none for a free trial. */
  charge: { period: number; amount: number } | null;
}

/**
 * What a new subscription with a card does first: a trial with an amount is charged now and lasts
 * its interval; a free trial charges nothing until it ends; without a trial the first regular
 * period is charged now.
 */
export function firstSchedule(plan: Plan, start: Date): FirstSchedule {
  if (plan.trial) {
    const trialEnd = addInterval(start, plan.trial.interval, plan.trial.interval_unit);
    const paid = plan.trial.amount > 0;
    // A calendar trial may end clamped (Jan 31 + 1 month = Feb 28); the months after it keep the 31st.
    const calendarTrial = plan.trial.interval_unit === 'month' || plan.trial.interval_unit === 'year';
    return {
      state: paid ? 'trial_processing' : 'trial',
      anchor: trialEnd,
      anchorDay: (calendarTrial ? start : trialEnd).getUTCDate(),
      renewAt: trialEnd,
      activeTo: trialEnd,
      charge: paid ? { period: TRIAL_PERIOD, amount: plan.trial.amount } : null,
    };
  }
  return {
    state: 'processing',
    anchor: start,
    anchorDay: start.getUTCDate(),
    renewAt: null,
    activeTo: null,
    charge: { period: 1, amount: plan.plan.amount },
  };
}

/**
 * The end of regular period n of a subscription, computed from the anchor (never from the previous
 * end, which may be clamped) so a Jan 31 schedule still ends on Mar 31 after February.
 */
export function periodEnd(
  sub: Pick<SubscriptionRow, 'billing_anchor' | 'billing_day'>,
  plan: Plan,
  n: number,
): Date {
  return addInterval(sub.billing_anchor, n * plan.plan.interval, plan.plan.interval_unit, sub.billing_day);
}

/**
 * How the answer to the subscription's first charge changes it (the seed's transition table):
 * successful → trial or active; failed or error on the very first charge → failed and cancelled;
 * incomplete (3-D Secure) → redirecting until the cardholder finishes; pending → unchanged.
 */
export function afterFirstCharge(
  sub: SubscriptionRow,
  plan: Plan,
  period: number,
  answer: TransactionAnswer,
  now: Date,
): SubscriptionChange {
  const last = summarize(answer);
  switch (answer.status) {
    case 'successful': {
      if (period === TRIAL_PERIOD) return { state: 'trial', last_transaction: last };
      const end = periodEnd(sub, plan, period);
      const done = !plan.infinite && plan.billing_cycles !== null && period >= plan.billing_cycles;
      return {
        state: 'active',
        paid_billing_cycles: period,
        number_failed_payment_attempts: 0,
        active_to: end,
        renew_at: done ? null : end,
        last_transaction: last,
      };
    }
    case 'failed':
    case 'error':
      return {
        state: 'failed',
        number_failed_payment_attempts: sub.number_failed_payment_attempts + 1,
        renew_at: null,
        active_to: null,
        cancelled_at: now,
        cancel_reason: `First payment ${answer.status}: ${answer.message ?? 'no message'}`,
        last_transaction: last,
      };
    case 'incomplete':
      return { state: 'redirecting', last_transaction: last };
    default:
      return { last_transaction: last };
  }
}

/**
 * An answer that arrives after the subscription was cancelled (the cardholder finished 3-D Secure
 * later, or a timed-out charge turned out successful): the cancellation stands, but the subscription
 * shows the charge, and a paid period counts as paid.
 */
export function afterLateCharge(
  sub: SubscriptionRow,
  plan: Plan,
  period: number,
  answer: TransactionAnswer,
): SubscriptionChange {
  const last = summarize(answer);
  if (answer.status !== 'successful' || period === TRIAL_PERIOD) return { last_transaction: last };
  return { last_transaction: last, paid_billing_cycles: period, active_to: periodEnd(sub, plan, period) };
}
