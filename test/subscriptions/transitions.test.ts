import { describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plans/service.js';
import type { SubscriptionRow } from '../../src/subscriptions/repository.js';
import {
  type ChargeOutcome,
  type Happened,
  type Rules,
  transition,
} from '../../src/subscriptions/transitions.js';

/**
 * The seed's transition table, row by row, against the one function that owns a subscription's
 * state (api-seed.md, "States and transitions").
 */

const NOW = new Date('2026-03-10T12:00:00.000Z');
const ANCHOR = new Date('2026-01-31T09:00:00.000Z');
const RETRY_AT = new Date('2026-03-11T03:00:00.000Z');
const rules: Rules = { retryAt: () => RETRY_AT };

const plan = (extra: Partial<Plan> = {}): Plan => ({
  id: 'pln_1',
  title: 'Gold',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
  trial: null,
  language: 'en',
  infinite: true,
  billing_cycles: null,
  number_payment_attempts: 3,
  test: true,
  shop_id: 1,
  created_at: ANCHOR.toISOString(),
  updated_at: ANCHOR.toISOString(),
  ...extra,
});

const sub = (extra: Partial<SubscriptionRow> = {}): SubscriptionRow =>
  ({
    id: 'sbs_1',
    shop_id: 1,
    plan_id: 'pln_1',
    customer_id: null,
    card_token: 'tok',
    card: null,
    state: 'active',
    billing_anchor: ANCHOR,
    billing_day: 31,
    time_zone: 'UTC',
    renew_at: new Date('2026-03-31T09:00:00.000Z'),
    active_to: new Date('2026-03-31T09:00:00.000Z'),
    paid_billing_cycles: 2,
    number_failed_payment_attempts: 0,
    last_transaction: null,
    cancel_reason: null,
    cancelled_at: null,
    created_at: ANCHOR,
    updated_at: ANCHOR,
    ...extra,
  }) as SubscriptionRow;

const answer = (period: number, outcome: ChargeOutcome): Happened => ({
  kind: 'charge_answered',
  period,
  outcome,
  last: null,
  message: outcome === 'successful' ? 'Successfully processed' : `Payment ${outcome}`,
});

describe('the seed transition table', () => {
  it('any state + cancel request → canceled, with cancel_reason and cancelled_at', () => {
    for (const state of ['pending', 'redirecting', 'trial', 'processing', 'active'] as const) {
      const t = transition(sub({ state }), plan(), { kind: 'canceled', reason: 'asked' }, NOW, rules);
      expect(t.change).toMatchObject({ state: 'canceled', cancel_reason: 'asked', cancelled_at: NOW });
      expect(t.change.renew_at).toBeNull();
      expect(t.events).toEqual(['canceled.subscription']);
    }
  });

  it.each(['failed', 'error', 'refused'] as const)(
    'the very first charge %s → failed, cancelled',
    (outcome) => {
      const first = sub({ state: 'processing', paid_billing_cycles: 0, renew_at: null, active_to: null });
      const t = transition(first, plan(), answer(1, outcome), NOW, rules);
      expect(t.change).toMatchObject({
        state: 'failed',
        cancelled_at: NOW,
        renew_at: null,
        number_failed_payment_attempts: 1,
      });
      expect(t.chargeStatus).toBe(outcome === 'refused' ? 'error' : outcome);
      expect(t.events).toEqual(['failed.subscription', 'canceled.subscription']);
    },
  );

  it('the first charge after a free trial is the very first: failed → failed, cancelled', () => {
    const trial = { amount: 0, interval: 7, interval_unit: 'day' as const, as_first_payment: false };
    const t = transition(
      sub({ state: 'trial_processing', paid_billing_cycles: 0 }),
      plan({ trial }),
      answer(1, 'failed'),
      NOW,
      rules,
    );
    expect(t.change).toMatchObject({ state: 'failed', cancelled_at: NOW });
  });

  it('a renewal failed after earlier successes → stays billed, retried by the shop rule', () => {
    const t = transition(sub(), plan(), answer(3, 'failed'), NOW, rules);
    expect(t.change).toEqual({ state: 'active', number_failed_payment_attempts: 1, renew_at: RETRY_AT });
    expect(t.change.cancelled_at).toBeUndefined();
    expect(t.events).toEqual([]);
  });

  it('after a paid trial the first regular charge failing is retried, not the end', () => {
    const trial = { amount: 100, interval: 7, interval_unit: 'day' as const, as_first_payment: false };
    const t = transition(
      sub({ state: 'trial_processing', paid_billing_cycles: 0 }),
      plan({ trial }),
      answer(1, 'failed'),
      NOW,
      rules,
    );
    expect(t.change).toMatchObject({ state: 'trial', number_failed_payment_attempts: 1, renew_at: RETRY_AT });
  });

  it('all retries failed → failed, cancelled', () => {
    const t = transition(sub({ number_failed_payment_attempts: 2 }), plan(), answer(3, 'failed'), NOW, rules);
    expect(t.change).toMatchObject({ state: 'failed', cancelled_at: NOW, number_failed_payment_attempts: 3 });
    expect(t.events).toEqual(['failed.subscription', 'canceled.subscription']);
  });

  it('errors after earlier successes, all retries error → error, cancelled', () => {
    const retried = transition(sub(), plan(), answer(3, 'error'), NOW, rules);
    expect(retried.change).toMatchObject({ state: 'active', renew_at: RETRY_AT });
    const last = transition(
      sub({ number_failed_payment_attempts: 2 }),
      plan(),
      answer(3, 'error'),
      NOW,
      rules,
    );
    expect(last.change).toMatchObject({ state: 'error', cancelled_at: NOW });
    expect(last.events).toEqual(['error.subscription', 'canceled.subscription']);
  });

  it('a successful retry resets the failures and keeps the billing day (no drift)', () => {
    const t = transition(
      sub({ number_failed_payment_attempts: 2 }),
      plan(),
      answer(3, 'successful'),
      NOW,
      rules,
    );
    // Period 3 of a schedule anchored on Jan 31 ends on Apr 30, whenever the retry succeeded.
    expect(t.change).toMatchObject({
      state: 'active',
      paid_billing_cycles: 3,
      number_failed_payment_attempts: 0,
      active_to: new Date('2026-04-30T09:00:00.000Z'),
      renew_at: new Date('2026-04-30T09:00:00.000Z'),
    });
    expect(t.events).toEqual(['renewed.subscription']);
  });

  it('the first charge succeeding activates; a paid trial starts the trial', () => {
    const first = transition(
      sub({ state: 'processing', paid_billing_cycles: 0 }),
      plan(),
      answer(1, 'successful'),
      NOW,
      rules,
    );
    expect(first.change).toMatchObject({ state: 'active', paid_billing_cycles: 1 });
    expect(first.events).toEqual(['activated.subscription']);
    const trial = transition(
      sub({ state: 'trial_processing', paid_billing_cycles: 0 }),
      plan(),
      answer(0, 'successful'),
      NOW,
      rules,
    );
    expect(trial.change).toMatchObject({ state: 'trial' });
    expect(trial.events).toEqual(['trial_started.subscription']);
  });

  it('a trial ending is claimed through trial_processing', () => {
    const t = transition(
      sub({ state: 'trial', paid_billing_cycles: 0 }),
      plan(),
      { kind: 'renewal_claimed', period: 1, lease: RETRY_AT },
      NOW,
      rules,
    );
    expect(t.change).toEqual({ state: 'trial_processing', renew_at: RETRY_AT });
    // Nothing is announced by the claim: the answer ends the trial, or keeps it for a retry.
    expect(t.events).toEqual([]);
  });

  it("the answer to the first charge after a trial ends it, unless a retry keeps it (the model's bug d)", () => {
    const claimed = sub({ state: 'trial_processing', paid_billing_cycles: 0 });
    const answer = (outcome: 'successful' | 'failed') =>
      transition(
        claimed,
        plan({ trial: { amount: 100, interval: 7, interval_unit: 'day', as_first_payment: false } }),
        { kind: 'charge_answered', period: 1, outcome, last: null, message: 'Declined' },
        NOW,
        rules,
      );
    expect(answer('successful').events).toEqual(['trial_ended.subscription', 'renewed.subscription']);
    const declined = answer('failed');
    expect(declined.change.state).toBe('trial');
    expect(declined.events).toEqual([]);
  });

  it('billing_cycles reached → canceled with a reason', () => {
    const t = transition(
      sub(),
      plan({ infinite: false, billing_cycles: 2 }),
      { kind: 'cycles_completed' },
      NOW,
      rules,
    );
    expect(t.change).toMatchObject({ state: 'canceled', cancelled_at: NOW, renew_at: null });
    expect(t.change.cancel_reason).toMatch(/billing cycles/);
    expect(t.events).toEqual(['canceled.subscription']);
  });

  it('an answer after cancellation changes no state but counts a paid period', () => {
    const canceled = sub({ state: 'canceled', cancelled_at: NOW, paid_billing_cycles: 2 });
    const t = transition(canceled, plan(), answer(3, 'successful'), NOW, rules);
    expect(t.change.state).toBeUndefined();
    expect(t.change.paid_billing_cycles).toBe(3);
    expect(t.events).toEqual([]);
    const declined = transition(canceled, plan(), answer(3, 'failed'), NOW, rules);
    expect(declined.change).toEqual({});
    expect(declined.chargeStatus).toBe('failed');
  });

  it('an attempt that never reached the gateway: a first payment fails, a renewal is tried again', () => {
    const first = transition(
      sub({ state: 'processing', paid_billing_cycles: 0 }),
      plan(),
      { kind: 'charge_abandoned', period: 1 },
      NOW,
      rules,
    );
    expect(first.change).toMatchObject({ state: 'failed', cancelled_at: NOW, renew_at: null });
    expect(first.chargeStatus).toBe('abandoned');
    const renewal = transition(sub(), plan(), { kind: 'charge_abandoned', period: 3 }, NOW, rules);
    expect(renewal).toEqual({ change: { renew_at: NOW }, chargeStatus: 'abandoned', events: [] });
  });

  it('a redirect subscription whose payment page expired unpaid → canceled; a paid or cancelled one goes on', () => {
    const waiting = sub({ state: 'redirecting', paid_billing_cycles: 0, card_token: null });
    expect(transition(waiting, plan(), { kind: 'checkout_expired' }, NOW, rules)).toEqual({
      change: {
        state: 'canceled',
        renew_at: null,
        cancelled_at: NOW,
        cancel_reason: 'The payment page expired before the customer paid',
      },
      chargeStatus: null,
      events: ['canceled.subscription'],
    });
    const paid = sub({ state: 'active', paid_billing_cycles: 1 });
    expect(transition(paid, plan(), { kind: 'checkout_expired' }, NOW, rules).change).toEqual({});
    const gone = sub({ state: 'canceled', cancelled_at: NOW, card_token: null });
    expect(transition(gone, plan(), { kind: 'checkout_expired' }, NOW, rules).events).toEqual([]);
  });

  it('nothing is claimed or cancelled twice', () => {
    const canceled = sub({ state: 'canceled', cancelled_at: NOW });
    expect(transition(canceled, plan(), { kind: 'canceled', reason: 'again' }, NOW, rules).change).toEqual(
      {},
    );
    expect(
      transition(canceled, plan(), { kind: 'renewal_claimed', period: 3, lease: RETRY_AT }, NOW, rules)
        .change,
    ).toEqual({});
  });

  it('pending and unknown outcomes decide nothing; a 3-D Secure step redirects a first charge', () => {
    const first = sub({ state: 'processing', paid_billing_cycles: 0 });
    const pending = transition(first, plan(), answer(1, 'pending'), NOW, rules);
    expect(pending.change).toEqual({});
    expect(transition(first, plan(), { kind: 'charge_unknown', period: 1, last: null }, NOW, rules)).toEqual({
      change: {},
      chargeStatus: 'unknown',
      events: [],
    });
    // Billing asks how the step ended only a day later: finishing it settles the charge at once.
    const step = transition(first, plan(), answer(1, 'incomplete'), NOW, rules);
    expect(step.change).toEqual({
      state: 'redirecting',
      renew_at: new Date(NOW.getTime() + 24 * 60 * 60 * 1000),
    });
    const gone = sub({ state: 'redirecting', paid_billing_cycles: 0, cancelled_at: NOW });
    expect(transition(gone, plan(), answer(1, 'incomplete'), NOW, rules).change).toEqual({
      state: 'redirecting',
    });
  });
});
