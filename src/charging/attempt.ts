import type { Ctx } from '../context.js';
import type { Tx } from '../db/db.js';
import type { ChargeRequest, PlannedPayment } from '../gateway/index.js';
import { type ChargeEvent, eventOf, outcomeWord, plannedEventOf, type Sent } from './answers.js';
import { type ChargeRow, lockOpenCharge, recordReversal, settleReversal } from './repository.js';
import { type ChargeKind, chargeGatewayKey, chargeTrackingId } from './requests.js';
import {
  endThreeDSecureStep,
  queryCharge,
  queryChargeByTrackingId,
  refundCharge,
  releaseVerification,
  send,
} from './send.js';

/**
 * The life of one charge attempt after its claim (docs/redesign-plan.md, B.2):
 *
 *   SEND    no transaction open: the gateway call, with the attempt's idempotency key (send.ts)
 *   READ    the answer becomes one ChargeEvent (answers.ts)
 *   RECORD  one transaction: the subject locked, then its attempt while still open; the subject
 *           applies the event (its state machine and its one writer) and the attempt settles
 *
 * An attempt is answered once: whoever records second (a read settling it, the 3-D Secure page, the
 * request that made the charge) finds it no longer open and changes nothing. An open attempt is
 * resolved by asking the gateway (resolveAttempt), never by charging again.
 */

/** One attempt at the charge of a period. */
export interface AttemptRef {
  period: number;
  attempt: number;
}

/**
 * What a charge is for (a subscription), as charging needs it: charging knows no subscription, the
 * subscription passes itself in. Lock order, always: the subject, then its attempt.
 */
export interface ChargeSubject<S> {
  /** Whose charges these are: subscription_charges.subscription_id. */
  readonly id: string;
  /** Locks the subject in `tx`; undefined when it is gone. */
  lock(tx: Tx): Promise<S | undefined>;
  /** Whether the locked subject still wants its charge (a cancelled subscription does not). */
  charged(locked: S): boolean;
  /** Applies `event` to the locked subject and settles the attempt (with its transaction's uid). */
  apply(tx: Tx, locked: S, event: ChargeEvent, attempt: AttemptRef & { uid: string | null }): Promise<S>;
}

/**
 * RECORD: applies `event` to the subject and its attempt, once. Resolves with the subject as it is
 * now, whether this call recorded the event or another had already settled the attempt.
 *
 * An attempt its subject's cancel ended (`reversal` due) that turns out to have taken money
 * (`payment`) pays for nothing: the event is recorded as reversed, and the payment is refunded at
 * once after the commit (a refund that cannot be made now is made by billing's next pass).
 */
export async function recordAttempt<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: AttemptRef,
  event: ChargeEvent,
  uid: string | null,
  payment?: { uid: string; amount: number },
): Promise<S> {
  let giveBack: ChargeRow | undefined;
  const recorded = await ctx.db.tx(async (tx) => {
    const locked = await subject.lock(tx);
    if (locked === undefined) throw new Error(`the subject ${subject.id} of a charge vanished`);
    const open = await lockOpenCharge(tx, subject.id, attempt.period, attempt.attempt);
    if (!open) return locked;
    const reversed =
      open.reversal === 'due' &&
      payment !== undefined &&
      event.kind === 'charge_answered' &&
      event.outcome === 'successful';
    if (reversed) giveBack = { ...open, transaction_uid: payment.uid, amount: payment.amount };
    const recorded = await subject.apply(tx, locked, reversed ? { ...event, reversed } : event, {
      ...attempt,
      uid,
    });
    // Ended without money to give back (a decline, a refusal, a released verification, an attempt
    // that never reached the gateway): nothing stays due. One still waiting (pending, a 3-D Secure
    // step) keeps its reversal for the answer that ends it.
    if (open.reversal === 'due' && !reversed && endsWithoutMoney(event)) await settleReversal(tx, open);
    return recorded;
  });
  if (giveBack) await refundAttempt(ctx, giveBack);
  return recorded;
}

/** Whether `event` ends its attempt for good, with no payment taken to give back. */
function endsWithoutMoney(event: ChargeEvent): boolean {
  if (event.kind === 'charge_abandoned') return true;
  if (event.kind !== 'charge_answered') return false;
  return event.outcome !== 'pending' && event.outcome !== 'incomplete';
}

/** The refund of an attempt's payment: its tracking id, and the gateway idempotency key it goes with. */
export function refundTrackingId(subscriptionId: string, period: number, attempt: number): string {
  return `${chargeTrackingId(subscriptionId, period, attempt)}-refund`;
}

/**
 * Gives back the payment of an attempt taken after its subscription was cancelled (`reversal` due,
 * status successful): refunded in full, announced by the gateway as every refund is, and recorded so
 * it is never refunded twice. False when it could not be made now; it stays due, for billing's next
 * pass (billing/renew.ts), and the reason is logged.
 */
export async function refundAttempt(ctx: Ctx, charge: ChargeRow): Promise<boolean> {
  const owner = { subscription: charge.subscription_id, period: charge.period, attempt: charge.attempt };
  if (!charge.transaction_uid) return false;
  try {
    const trackingId = refundTrackingId(charge.subscription_id, charge.period, charge.attempt);
    const refund = await refundCharge(
      ctx,
      { uid: charge.transaction_uid, amount: charge.amount },
      trackingId,
      `kopek-refund:${trackingId}`,
    );
    if (refund.status !== 'successful') {
      ctx.log.error(
        { ...owner, uid: refund.uid, status: refund.status, message: refund.message },
        'the refund of a payment taken after its subscription was cancelled did not go through; billing tries again',
      );
      return false;
    }
    await recordReversal(ctx.db, charge, refund.uid);
    ctx.log.info(
      { ...owner, uid: refund.uid },
      'refunded a payment taken after its subscription was cancelled',
    );
    return true;
  } catch (err) {
    ctx.log.error(
      { err, ...owner },
      'could not refund a payment taken after its subscription was cancelled; billing tries again',
    );
    return false;
  }
}

/**
 * Ends an attempt that was open when its subject was cancelled (repository.ts: endOpenAttempts): a
 * 3-D Secure step still open is ended at the gateway, so its page can no longer complete it, and the
 * attempt is then resolved by asking the gateway. Money it took after all is refunded as it is
 * recorded (recordAttempt). Never throws: an attempt the gateway cannot end now is resolved later by
 * billing, as every open attempt of a cancelled subscription is.
 */
export async function endAttempt<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: ChargeRow,
): Promise<S | undefined> {
  try {
    if (attempt.transaction_uid && attempt.status === 'incomplete')
      await endThreeDSecureStep(ctx, attempt.transaction_uid);
    const resolved = await resolveAttempt(ctx, subject, attempt, {
      settles: (status) => status === 'successful' || status === 'failed' || status === 'error',
      abandonWhenMissing: false,
    });
    return resolved.kind === 'settled' ? resolved.subject : undefined;
  } catch (err) {
    ctx.log.warn(
      { err, subscription: attempt.subscription_id, period: attempt.period },
      'could not end the open charge of a cancelled subscription now; billing resolves it',
    );
    return undefined;
  }
}

/**
 * Records a payment the in-process gateway decided without I/O (send.ts: plan) together with its
 * outcome, in one transaction, and only while its attempt is still open and its subject still wants
 * it: a subject cancelled meanwhile has the attempt abandoned and nothing is charged. 'lost' when
 * the attempt was no longer open (another run settled it).
 */
export function recordPlannedAttempt<S>(
  ctx: Pick<Ctx, 'db'>,
  subject: ChargeSubject<S>,
  attempt: AttemptRef,
  planned: PlannedPayment,
  recheckAt: Date,
): Promise<'recorded' | 'abandoned' | 'lost'> {
  return ctx.db.tx(async (tx) => {
    const locked = await subject.lock(tx);
    if (locked === undefined || !(await lockOpenCharge(tx, subject.id, attempt.period, attempt.attempt)))
      return 'lost';
    if (!subject.charged(locked)) {
      await subject.apply(
        tx,
        locked,
        { kind: 'charge_abandoned', period: attempt.period },
        { ...attempt, uid: null },
      );
      return 'abandoned';
    }
    await tx.batch(planned.statements);
    const event = plannedEventOf(planned, attempt.period, recheckAt);
    await subject.apply(tx, locked, event, { ...attempt, uid: planned.answer.uid });
    return 'recorded';
  });
}

export interface Taken<S> {
  subject: S;
  /** The outcome word, for logs and the billing summary. */
  outcome: string;
}

/**
 * SEND, READ and RECORD for a claimed attempt: the request goes out with the attempt's idempotency
 * key, and whatever comes back (an answer, a refusal, nothing in time) is recorded as its event. An
 * unknown outcome is asked about again at `recheckAt`. `kind`: a payment, or a card verification.
 */
export async function takeAttempt<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: AttemptRef,
  request: ChargeRequest,
  recheckAt: () => Date,
  kind: ChargeKind = 'payment',
): Promise<Taken<S>> {
  const sent = await send(ctx, request, {
    owner: { subscription: subject.id },
    idempotencyKey: chargeGatewayKey(subject.id, attempt.period, attempt.attempt),
    type: kind === 'verification' ? 'authorization' : 'payment',
  });
  return recordSent(ctx, subject, attempt, sent, recheckAt());
}

/**
 * READ and RECORD: how a send ended becomes the attempt's event, recorded with its transaction. A
 * card verification's authorization is released first (send.ts: releaseVerification).
 */
async function recordSent<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: AttemptRef,
  sent: Sent,
  recheckAt: Date,
): Promise<Taken<S>> {
  if (sent.kind === 'answered') await releaseVerification(ctx, sent.answer, subject.id);
  const uid =
    sent.kind === 'answered' ? sent.answer.uid : sent.kind === 'unknown' ? (sent.uid ?? null) : null;
  const event = eventOf(sent, attempt.period, recheckAt);
  // Money a payment took: given back should the attempt have been ended by a cancel meanwhile.
  const payment =
    sent.kind === 'answered' && sent.answer.type === 'payment'
      ? { uid: sent.answer.uid, amount: sent.answer.amount }
      : undefined;
  return {
    subject: await recordAttempt(ctx, subject, attempt, event, uid, payment),
    outcome: outcomeWord(sent),
  };
}

/**
 * Resumes an attempt claimed by a run that stopped before recording it (a keyed request retried
 * after a crash): the gateway is asked first, by the attempt's tracking id, and what it has is
 * recorded. Only when it has nothing is the request sent, with the attempt's idempotency key, so a
 * gateway that got the first request meanwhile answers with it instead of charging again.
 */
export async function resumeAttempt<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: AttemptRef,
  request: ChargeRequest,
  recheckAt: () => Date,
  kind: ChargeKind = 'payment',
): Promise<Taken<S>> {
  const found = await queryChargeByTrackingId(
    ctx,
    chargeTrackingId(subject.id, attempt.period, attempt.attempt),
  );
  if (!found) return takeAttempt(ctx, subject, attempt, request, recheckAt, kind);
  return recordSent(ctx, subject, attempt, { kind: 'answered', answer: found }, recheckAt());
}

/** What asking the gateway about an open attempt found. */
export type Resolution<S> =
  | { kind: 'settled'; subject: S; outcome: string }
  /** The gateway has it, not finished yet (pending, or a 3-D Secure step still open). */
  | { kind: 'open' }
  /** The gateway never got it: abandoned, so its period can be tried again. */
  | { kind: 'abandoned'; subject: S };

export interface ResolveOptions {
  /** Whether the gateway's status of the transaction settles the attempt. */
  settles: (status: string) => boolean;
  /** Abandon the attempt when the gateway has no payment under its tracking id. */
  abandonWhenMissing: boolean;
}

/**
 * An open attempt (a 3-D Secure step, a timeout, a process that died before recording) resolved by
 * asking the gateway, never by charging again: by uid when known, else by its tracking id. A final
 * answer is recorded as if it had come at once. None at all, when the caller knows the attempt's
 * lease has passed, means it never reached the gateway (the claim commits before the request leaves,
 * and a lease outlasts any request): it is abandoned.
 */
export async function resolveAttempt<S>(
  ctx: Ctx,
  subject: ChargeSubject<S>,
  attempt: AttemptRef & { transaction_uid: string | null },
  options: ResolveOptions,
): Promise<Resolution<S>> {
  const answer = attempt.transaction_uid
    ? await queryCharge(ctx, attempt.transaction_uid)
    : await queryChargeByTrackingId(ctx, chargeTrackingId(subject.id, attempt.period, attempt.attempt));
  const ref = { period: attempt.period, attempt: attempt.attempt };
  if (answer && options.settles(answer.status)) {
    const taken = await recordSent(ctx, subject, ref, { kind: 'answered', answer }, ctx.clock.now());
    return { kind: 'settled', ...taken };
  }
  if (answer || !options.abandonWhenMissing) return { kind: 'open' };
  const event: ChargeEvent = { kind: 'charge_abandoned', period: attempt.period };
  return { kind: 'abandoned', subject: await recordAttempt(ctx, subject, ref, event, null) };
}
