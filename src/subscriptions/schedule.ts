import { addInterval, localDayOfMonth } from '../calendar/interval.js';
import type { Plan } from '../plans/index.js';
import type { SubscriptionRow, SubscriptionState } from './repository.js';

/**
 * How long a claimed charge attempt keeps the billing engine off the subscription: long enough for
 * any gateway request to end, after which an attempt still open is resolved by a query.
 */
export const CHARGE_LEASE_MS = 5 * 60 * 1000;

/**
 * How long a charge waiting for the cardholder's 3-D Secure step is left before billing asks the
 * gateway again how it ended. Finishing the step settles the charge at once; this is the safety net
 * for a step whose ending was not recorded, and it keeps a step nobody finishes from being asked
 * after every lease.
 */
export const THREE_DS_RECHECK_MS = 24 * 60 * 60 * 1000;

/** Period 0 is the trial charge; regular periods count from 1. */
export const TRIAL_PERIOD = 0;

/**
 * What a free trial's card verification authorizes (and releases at once): the gateway takes no
 * authorization of 0, so the smallest amount there is, one minor unit.
 */
export const VERIFICATION_AMOUNT = 1;

/**
 * Whether a charge of `period` verifies the card instead of taking money: the trial "charge" of a
 * free trial, made only on a shop with 3-D Secure (firstSchedule), as an authorization released at once.
 */
export function isCardVerification(plan: Plan, period: number): boolean {
  return period === TRIAL_PERIOD && plan.trial !== null && plan.trial.amount === 0;
}

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
 * period is charged now. `verifyCard` (a shop with 3-D Secure): a free trial verifies the card now
 * as a first charge would, through 3-D Secure, with an authorization of VERIFICATION_AMOUNT that is
 * released at once; the trial starts when the verification succeeds.
 */
export function firstSchedule(plan: Plan, start: Date, timeZone = 'UTC', verifyCard = false): FirstSchedule {
  if (plan.trial) {
    const trialEnd = addInterval(start, plan.trial.interval, plan.trial.interval_unit, undefined, timeZone);
    const paid = plan.trial.amount > 0;
    const verified = !paid && verifyCard;
    // A calendar trial may end clamped (Jan 31 + 1 month = Feb 28); the months after it keep the 31st.
    const calendarTrial = plan.trial.interval_unit === 'month' || plan.trial.interval_unit === 'year';
    return {
      state: paid || verified ? 'trial_processing' : 'trial',
      anchor: trialEnd,
      anchorDay: localDayOfMonth(calendarTrial ? start : trialEnd, timeZone),
      renewAt: trialEnd,
      activeTo: trialEnd,
      charge: paid
        ? { period: TRIAL_PERIOD, amount: plan.trial.amount }
        : verified
          ? { period: TRIAL_PERIOD, amount: VERIFICATION_AMOUNT }
          : null,
    };
  }
  return {
    state: 'processing',
    anchor: start,
    anchorDay: localDayOfMonth(start, timeZone),
    renewAt: null,
    activeTo: null,
    charge: { period: 1, amount: plan.plan.amount },
  };
}

/**
 * The end of regular period n of a subscription, computed from the anchor (never from the previous
 * end, which may be clamped) so a Jan 31 schedule still ends on Mar 31 after February; in the
 * subscription's own zone, so a later change of its shop's zone moves no period.
 */
export function periodEnd(
  sub: Pick<SubscriptionRow, 'billing_anchor' | 'billing_day' | 'time_zone'>,
  plan: Plan,
  n: number,
): Date {
  return addInterval(
    sub.billing_anchor,
    n * plan.plan.interval,
    plan.plan.interval_unit,
    sub.billing_day,
    sub.time_zone,
  );
}

/**
 * Whether a finite plan has charged every cycle it has: the subscription then ends with its last
 * period. A paid trial with `as_first_payment` counts as the first of the plan's billing cycles.
 */
export function cyclesDone(sub: Pick<SubscriptionRow, 'paid_billing_cycles'>, plan: Plan): boolean {
  if (plan.infinite || plan.billing_cycles === null) return false;
  const trialCycle = plan.trial?.as_first_payment && plan.trial.amount > 0 ? 1 : 0;
  return sub.paid_billing_cycles + trialCycle >= plan.billing_cycles;
}
