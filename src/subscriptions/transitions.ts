import type { CardRecord } from '../cards/index.js';
import type { ChargeEvent } from '../charging/index.js';
import type { Plan } from '../plans/index.js';
import type { SubscriptionChange, SubscriptionRow } from './repository.js';
import {
  cyclesDone,
  type FirstSchedule,
  isCardVerification,
  periodEnd,
  THREE_DS_RECHECK_MS,
  TRIAL_PERIOD,
} from './schedule.js';

/**
 * A subscription's whole state machine (the seed's transition table), as one pure function: what
 * happened to a subscription → how its row changes, what its charge record says, and which events
 * are announced. Every path that changes a subscription (the first charge, the 3-D Secure return, a
 * late answer, a timeout's resolution, renewals, retries, cancellation, the end of billing cycles)
 * asks `transition` and applies the result with the one writer (state.ts).
 */

export type { ChargeOutcome } from '../charging/index.js';

export type Happened =
  /** What happened to a charge attempt: answered, unknown or abandoned (charging/answers.ts). */
  | ChargeEvent
  /** The scheduler takes a due renewal (or the charge that ends a trial). */
  | { kind: 'renewal_claimed'; period: number; lease: Date }
  /**
   * The scheduler looks at the subscription again at `until`: while an open attempt waits for its
   * outcome, or at once after an attempt was proven never to have reached the gateway.
   */
  | { kind: 'lease'; until: Date }
  /**
   * The customer gave a card on the hosted page of a redirect subscription: from here on it is what
   * the card variant would have been at creation (`schedule` from the moment of paying), with the
   * first charge (when there is one) claimed until `lease`.
   */
  | {
      kind: 'checkout_paid';
      card: CardRecord;
      customerId: string | null;
      schedule: FirstSchedule;
      lease: Date;
    }
  /** The shop cancels. */
  | { kind: 'canceled'; reason: string }
  /** The last of a finite plan's billing cycles has run out. */
  | { kind: 'cycles_completed' }
  /** The hosted payment page of a redirect subscription expired before the customer paid. */
  | { kind: 'checkout_expired' };

/** Why a redirect subscription whose payment page expired unpaid was cancelled. */
export const CHECKOUT_EXPIRED_REASON = 'The payment page expired before the customer paid';

export type SubscriptionEvent =
  | 'created.subscription'
  | 'trial_started.subscription'
  | 'trial_ended.subscription'
  | 'activated.subscription'
  | 'renewed.subscription'
  | 'failed.subscription'
  | 'error.subscription'
  | 'canceled.subscription';

export interface Transition {
  change: SubscriptionChange;
  /** The status to record on the charge attempt, when the event answered one. */
  chargeStatus: string | null;
  events: SubscriptionEvent[];
}

/**
 * When a failed renewal charge is tried again: the shop's retry rules, already bound to its
 * settings, read in the subscription's own zone (`timeZone`).
 */
export type RetryRule = (
  outcome: 'failed' | 'error',
  failuresSoFar: number,
  failedAt: Date,
  timeZone: string,
) => Date;

/**
 * A shop's billing rules. Month and year periods keep their day and time of day in the
 * subscription's own zone (`time_zone`, fixed at its creation), never the shop's current one.
 */
export interface Rules {
  retryAt: RetryRule;
}

/** States in which the subscription waits for the answer to its very first charge. */
const FIRST_CHARGE_STATES = new Set(['processing', 'trial_processing', 'redirecting', 'pending']);

const none = (chargeStatus: string | null = null, change: SubscriptionChange = {}): Transition => ({
  change,
  chargeStatus,
  events: [],
});

/**
 * Whether a charge of `period` would follow an earlier successful charge of the subscription: a paid
 * period, or the paid trial that preceded the first regular period.
 */
export function hadEarlierSuccess(sub: SubscriptionRow, plan: Plan, period: number): boolean {
  if (sub.paid_billing_cycles > 0) return true;
  return period > TRIAL_PERIOD && plan.trial !== null && plan.trial.amount > 0;
}

/** The regular period a due renewal charges: the one after the last paid. */
export function nextPeriod(sub: SubscriptionRow): number {
  return sub.paid_billing_cycles + 1;
}

/**
 * `plan` is undefined only when its row is missing (damage the store refuses to cause): a
 * cancellation still goes through; nothing is charged without its plan.
 */
export function transition(
  sub: SubscriptionRow,
  plan: Plan | undefined,
  happened: Happened,
  now: Date,
  rules: Rules,
): Transition {
  const t = decide(sub, plan, happened, now, rules);
  if (sub.announced !== false || !(CHARGE_EVENTS.has(happened.kind) || t.events.length > 0)) return t;
  // A card subscription announces itself with the first record of its first charge (or whatever
  // else first changes it): created.subscription then carries the state the API answered, the
  // same whether the charge was decided in one batch or recorded after a remote gateway's answer.
  return { ...t, change: { ...t.change, announced: true }, events: ['created.subscription', ...t.events] };
}

const CHARGE_EVENTS = new Set<Happened['kind']>(['charge_answered', 'charge_unknown', 'charge_abandoned']);

function decide(
  sub: SubscriptionRow,
  plan: Plan | undefined,
  happened: Happened,
  now: Date,
  rules: Rules,
): Transition {
  switch (happened.kind) {
    case 'canceled':
      if (sub.cancelled_at) return none();
      return {
        change: { state: 'canceled', renew_at: null, cancelled_at: now, cancel_reason: happened.reason },
        chargeStatus: null,
        events: ['canceled.subscription'],
      };
    case 'checkout_expired':
      // Only a subscription still waiting for its card ends: one paid or cancelled meanwhile goes on.
      if (sub.cancelled_at || sub.card_token || sub.state !== 'redirecting') return none();
      return {
        change: {
          state: 'canceled',
          renew_at: null,
          cancelled_at: now,
          cancel_reason: CHECKOUT_EXPIRED_REASON,
        },
        chargeStatus: null,
        events: ['canceled.subscription'],
      };
    case 'checkout_paid': {
      // Only a subscription still waiting for its card takes one: a second post of the page, or a
      // page paid after a cancellation, changes nothing.
      if (sub.cancelled_at || sub.card_token || sub.state !== 'redirecting') return none();
      const s = happened.schedule;
      return {
        change: {
          state: s.state,
          card_token: happened.card.token,
          card: happened.card,
          ...(happened.customerId && !sub.customer_id ? { customer_id: happened.customerId } : {}),
          billing_anchor: s.anchor,
          billing_day: s.anchorDay,
          renew_at: s.charge ? happened.lease : s.renewAt,
          active_to: s.activeTo,
        },
        chargeStatus: null,
        // As the card variant: a free trial starts at once; otherwise the first charge's answer says.
        events: s.state === 'trial' ? ['trial_started.subscription'] : [],
      };
    }
    case 'cycles_completed':
      if (sub.cancelled_at || !plan) return none();
      return {
        change: {
          state: 'canceled',
          renew_at: null,
          cancelled_at: now,
          cancel_reason: `All ${plan.billing_cycles} billing cycles of the plan were paid`,
        },
        chargeStatus: null,
        events: ['canceled.subscription'],
      };
    case 'renewal_claimed':
      if (sub.cancelled_at) return none();
      // The lease keeps other instances off while the charge runs; a crash leaves it due again
      // after the lease, and the open attempt is then resolved by query before anything else.
      // The trial ends with the answer to this charge, not its claim (endsTrial): a decline with a
      // retry to come keeps the subscription in its trial, and nothing was announced meanwhile.
      return {
        change: { state: sub.state === 'trial' ? 'trial_processing' : sub.state, renew_at: happened.lease },
        chargeStatus: null,
        events: [],
      };
    case 'charge_abandoned':
      if (sub.cancelled_at || !plan) return none('abandoned');
      if (!hadEarlierSuccess(sub, plan, happened.period) && sub.paid_billing_cycles === 0) {
        // A first payment is made with the cardholder present; it is not taken later behind their back.
        return {
          change: {
            state: 'failed',
            renew_at: null,
            active_to: null,
            cancelled_at: now,
            cancel_reason: 'First payment could not be completed: it never reached the gateway',
          },
          chargeStatus: 'abandoned',
          events: ['failed.subscription', 'canceled.subscription'],
        };
      }
      // Nothing was charged and it was no decline: the period is tried again at once.
      return none('abandoned', { renew_at: now });
    case 'lease':
      return none(null, sub.cancelled_at ? {} : { renew_at: happened.until });
    case 'charge_unknown':
      return none('unknown', {
        ...(happened.last ? { last_transaction: happened.last } : {}),
        ...(happened.recheckAt && !sub.cancelled_at ? { renew_at: happened.recheckAt } : {}),
      });
    case 'charge_answered':
      if (!plan) throw new Error(`subscription ${sub.id}: a charge was answered without its plan`);
      return endsTrial(sub, happened.period, answered(sub, plan, happened, now, rules));
  }
}

/**
 * The first regular charge after a trial (claimed in trial_processing) ends the trial when its answer
 * moves the subscription out of it: paid, or failed for good. A decline that is retried leaves it in
 * its trial; the trial's own charge (period 0) starts the trial instead.
 */
function endsTrial(sub: SubscriptionRow, period: number, t: Transition): Transition {
  if (sub.state !== 'trial_processing' || period === TRIAL_PERIOD) return t;
  if (t.change.state === undefined || t.change.state === 'trial' || t.change.state === 'trial_processing')
    return t;
  return { ...t, events: ['trial_ended.subscription', ...t.events] };
}

function answered(
  sub: SubscriptionRow,
  plan: Plan,
  a: Extract<Happened, { kind: 'charge_answered' }>,
  now: Date,
  rules: Rules,
): Transition {
  const chargeStatus = a.outcome === 'refused' ? 'error' : a.outcome;
  const last = a.last ? { last_transaction: a.last } : {};
  // A pending answer, or the cardholder's 3-D Secure step: nothing is decided yet.
  if (a.outcome === 'pending') return none(chargeStatus, last);
  if (a.outcome === 'incomplete') {
    // Billing looks again only much later: the step's ending settles the charge when it comes.
    const recheck = sub.cancelled_at ? {} : { renew_at: new Date(now.getTime() + THREE_DS_RECHECK_MS) };
    return none(chargeStatus, {
      ...(FIRST_CHARGE_STATES.has(sub.state) ? { state: 'redirecting' } : {}),
      ...last,
      ...recheck,
    });
  }
  if (sub.cancelled_at) return late(sub, plan, a, chargeStatus);

  if (a.outcome === 'successful') return paid(sub, plan, a.period, chargeStatus, last);

  const failures = sub.number_failed_payment_attempts + 1;
  const reason = a.message ?? 'no message';
  if (!hadEarlierSuccess(sub, plan, a.period)) {
    // The very first charge failed or errored (or the gateway refused it): failed and cancelled.
    // A free trial's card verification (schedule.ts) is its first charge.
    const what = a.outcome === 'refused' ? 'refused by the gateway' : a.outcome;
    const first = isCardVerification(plan, a.period) ? 'Card verification' : 'First payment';
    return {
      change: {
        state: 'failed',
        number_failed_payment_attempts: failures,
        renew_at: null,
        active_to: null,
        cancelled_at: now,
        cancel_reason: `${first} ${what}: ${reason}`,
        ...last,
      },
      chargeStatus,
      events: ['failed.subscription', 'canceled.subscription'],
    };
  }
  const outcome = a.outcome === 'failed' ? 'failed' : 'error';
  if (failures < plan.number_payment_attempts) {
    // Retried from the same period: a later success keeps the original billing day.
    return none(chargeStatus, {
      state: sub.state === 'trial_processing' ? 'trial' : sub.state === 'processing' ? 'active' : sub.state,
      number_failed_payment_attempts: failures,
      renew_at: rules.retryAt(outcome, failures, now, sub.time_zone),
      ...last,
    });
  }
  return {
    change: {
      state: outcome,
      number_failed_payment_attempts: failures,
      renew_at: null,
      cancelled_at: now,
      cancel_reason: `Payment ${outcome} ${failures} time${failures === 1 ? '' : 's'} in a row: ${reason}`,
      ...last,
    },
    chargeStatus,
    events: [outcome === 'failed' ? 'failed.subscription' : 'error.subscription', 'canceled.subscription'],
  };
}

/** A successful charge: the trial starts, or the period is paid and the next one is scheduled. */
function paid(
  sub: SubscriptionRow,
  plan: Plan,
  period: number,
  chargeStatus: string,
  last: SubscriptionChange,
): Transition {
  if (period === TRIAL_PERIOD) {
    // Regular periods count from the trial's end: that is when the first of them is due.
    return {
      change: {
        state: 'trial',
        number_failed_payment_attempts: 0,
        renew_at: sub.billing_anchor,
        active_to: sub.billing_anchor,
        ...last,
      },
      chargeStatus,
      events: ['trial_started.subscription'],
    };
  }
  const end = periodEnd(sub, plan, period);
  const first = !hadEarlierSuccess(sub, plan, period) && sub.paid_billing_cycles === 0;
  return {
    change: {
      state: 'active',
      paid_billing_cycles: Math.max(sub.paid_billing_cycles, period),
      number_failed_payment_attempts: 0,
      active_to: end,
      // Due again at the period's end: then the next period is charged, or a finite plan whose
      // cycles are all paid ends.
      renew_at: end,
      ...last,
    },
    chargeStatus,
    events: [first ? 'activated.subscription' : 'renewed.subscription'],
  };
}

/**
 * An answer after the subscription was cancelled (the cardholder finished 3-D Secure later, or a
 * timed-out charge turned out successful): the cancellation stands, but the subscription shows the
 * charge, and a paid period counts as paid.
 */
function late(
  sub: SubscriptionRow,
  plan: Plan,
  a: Extract<Happened, { kind: 'charge_answered' }>,
  chargeStatus: string,
): Transition {
  const last = a.last ? { last_transaction: a.last } : {};
  // A payment refunded because the cancel came first (charging: recordAttempt) pays for nothing.
  if (a.outcome !== 'successful' || a.period === TRIAL_PERIOD || a.reversed) return none(chargeStatus, last);
  return none(chargeStatus, {
    ...last,
    paid_billing_cycles: Math.max(sub.paid_billing_cycles, a.period),
    active_to: periodEnd(sub, plan, a.period),
  });
}

/** The charge and its number, and what happens, when a subscription falls due. */
export function whenDue(
  sub: SubscriptionRow,
  plan: Plan,
): { kind: 'charge'; period: number } | { kind: 'end' } {
  if (cyclesDone(sub, plan)) return { kind: 'end' };
  return { kind: 'charge', period: nextPeriod(sub) };
}
