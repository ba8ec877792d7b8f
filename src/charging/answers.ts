import type { ApiError } from '../core/errors.js';
import type { TransactionAnswer } from '../gateway/index.js';

/**
 * What a gateway answer means for a charge attempt: the one place where an answer, a refusal or a
 * silence becomes the event a subscription's state machine (subscriptions/transitions.ts) takes.
 */

/** A subscription's last transaction, as the API shows it and the row keeps it. */
export interface TransactionSummary {
  uid: string;
  status: string;
  message: string | null;
  created_at: string;
  redirect_url?: string;
}

export function summarize(t: TransactionAnswer): TransactionSummary {
  return {
    uid: t.uid,
    status: t.status,
    message: t.message,
    created_at: t.created_at,
    ...(t.status === 'incomplete' && t.redirect_url ? { redirect_url: t.redirect_url } : {}),
  };
}

/** What the gateway said of one charge attempt; `refused` when it refused the request itself. */
export type ChargeOutcome = 'successful' | 'failed' | 'error' | 'incomplete' | 'pending' | 'refused';

/** What can happen to one charge attempt, as its subject's state machine takes it. */
export type ChargeEvent =
  /** A charge attempt's answer (or the gateway's refusal of it). */
  | {
      kind: 'charge_answered';
      period: number;
      outcome: ChargeOutcome;
      last: TransactionSummary | null;
      message: string | null;
      /**
       * A success that is given back: the attempt was open when its subscription was cancelled,
       * and its payment is refunded at once (attempt.ts). It pays for no period.
       */
      reversed?: boolean;
    }
  /**
   * No answer in time: the outcome is unknown until a query tells; the billing engine asks again
   * at `recheckAt`.
   */
  | { kind: 'charge_unknown'; period: number; last: TransactionSummary | null; recheckAt?: Date }
  /**
   * A claimed attempt proven never to have reached the gateway (after its lease, a query found
   * nothing), or never sent because the subscription was cancelled first: nothing was charged.
   */
  | { kind: 'charge_abandoned'; period: number };

const OUTCOMES = new Set(['successful', 'failed', 'error', 'incomplete', 'pending']);

export function outcomeOf(answer: TransactionAnswer): ChargeOutcome {
  return OUTCOMES.has(answer.status) ? (answer.status as ChargeOutcome) : 'pending';
}

/**
 * How a send ended (charging/send.ts): an answer; a refusal of the request itself (nothing was
 * charged); or no answer in time, the money may or may not have moved (with the pending transaction
 * when the gateway has one).
 */
export type Sent =
  | { kind: 'answered'; answer: TransactionAnswer }
  /** The gateway refused the request itself (its 422 and the like): nothing was charged. */
  | { kind: 'refused'; message: string; error: ApiError }
  | {
      kind: 'unknown';
      uid: string | undefined;
      pending: TransactionAnswer | undefined;
      /** What the call ended with (a timeout, a request still in flight, a failure without answer). */
      cause?: unknown;
    };

/** The event of a send's end, for the attempt of `period`; an unknown one is asked about at `recheckAt`. */
export function eventOf(sent: Sent, period: number, recheckAt: Date): ChargeEvent {
  switch (sent.kind) {
    case 'answered':
      return {
        kind: 'charge_answered',
        period,
        outcome: outcomeOf(sent.answer),
        last: summarize(sent.answer),
        message: sent.answer.message,
      };
    case 'refused':
      return { kind: 'charge_answered', period, outcome: 'refused', last: null, message: sent.message };
    case 'unknown':
      return {
        kind: 'charge_unknown',
        period,
        last: sent.pending ? summarize(sent.pending) : null,
        recheckAt,
      };
  }
}

/** The outcome word of a send, for logs and the billing summary. */
export function outcomeWord(sent: Sent): string {
  if (sent.kind === 'answered') return outcomeOf(sent.answer);
  return sent.kind === 'refused' ? 'refused' : 'unknown';
}

/**
 * The event of a payment the in-process gateway decided without I/O (planPayment): its answer, or,
 * when it timed out, an unknown outcome with the pending transaction it shows.
 */
export function plannedEventOf(
  planned: { answer: TransactionAnswer; timedOut: boolean },
  period: number,
  recheckAt: Date,
): ChargeEvent {
  return planned.timedOut
    ? { kind: 'charge_unknown', period, last: summarize(planned.answer), recheckAt }
    : eventOf({ kind: 'answered', answer: planned.answer }, period, recheckAt);
}
