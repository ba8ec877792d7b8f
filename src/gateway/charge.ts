import { randomUUID } from 'node:crypto';
import { type CardRecord, toCardRecord } from '../cards/index.js';
import type { Ctx } from '../context.js';
import type { Queryable, Statement } from '../db/db.js';
import { type NewTransaction, storedTransactionRow, type TransactionRow } from '../ledger/index.js';
import {
  avsCvcResult,
  type Decision,
  decideCharge,
  decideCredit,
  notEnrolledVerification,
  pendingVerification,
} from './acquirer.js';
import { insertAnnounced, transactionAnnouncement } from './announce.js';
import { type GatewayType, PROCESSED, sectionFor, type TransactionAnswer, toAnswer } from './answer.js';
import { type ChargeCard, cardOf, type KnownCards } from './card-source.js';
import { GatewayTimeout } from './errors.js';
import { type ChargeInput, parseCharge, requestOf } from './input.js';
import {
  firstChargeOf,
  hasSuccessfulCharge,
  insertCharge,
  lockCardCharges,
  type NewCharge,
  plannedChargeStatements,
} from './repository.js';
import { behaviourOf } from './test-cards.js';

/** Payments, authorizations and credits: the verbs that take money from (or give it to) a card. */

export const DUPLICATE_WINDOW_MS = 30_000;

export const ChargeMsg = {
  duplicate: (first: string) =>
    `Duplicate transaction: the same card, amount, currency and tracking_id were sent within 30 seconds (transaction ${first}). Check its status instead of charging again, or send duplicate_check false`,
  avsCvcRejected: 'Payment was declined by AVS/CVC verification',
} as const;

type ChargeType = 'payment' | 'authorization' | 'credit';

function baseRow(
  ctx: Ctx,
  uid: string,
  type: ChargeType,
  input: ChargeInput,
  card: ChargeCard,
): Required<NewTransaction> {
  // Every member named, the outcome's ones empty until decided: a charge's row then keeps one shape
  // from here to its INSERT, which keeps the engine off its slow object paths.
  return {
    uid,
    shop_id: ctx.shop.id,
    type,
    status: 'pending',
    message: null,
    amount: input.amount,
    currency: input.currency,
    description: input.description,
    tracking_id: input.trackingId,
    parent_uid: null,
    test: ctx.shop.test || input.test === true,
    language: input.language,
    card_token: card.row.token,
    card: toCardRecord(card.row) as unknown as Record<string, unknown>,
    billing_address: input.billingAddress as Record<string, unknown> | null,
    customer: input.customer as Record<string, unknown> | null,
    three_d_secure: null,
    avs_cvc: null,
    return_url: input.returnUrl,
    notification_url: input.notificationUrl,
    details: {},
    paid_at: null,
  };
}

/** What the acquirer's decision writes into the ledger row. */
function outcomeRow(
  type: ChargeType,
  decision: Decision,
  now: Date,
): Partial<NewTransaction> & Pick<NewTransaction, 'status'> {
  const paidAt = type === 'authorization' ? null : now;
  switch (decision.outcome) {
    case 'successful':
      return {
        status: 'successful',
        message: PROCESSED,
        paid_at: paidAt,
        details: { section: sectionFor(type, 'successful', null) },
      };
    case 'failed':
    case 'error':
      return {
        status: decision.outcome,
        message: decision.message,
        details: { section: sectionFor(type, decision.outcome, decision.message) },
      };
    case 'timeout':
      return {
        status: 'pending',
        message: null,
        details: { section: sectionFor(type, 'pending', null), acquirer_timeout: true },
      };
    case 'incomplete':
      return {
        status: 'incomplete',
        message: null,
        three_d_secure: pendingVerification() as unknown as Record<string, unknown>,
        details: {
          section: sectionFor(type, 'incomplete', null),
          three_ds: { flow: decision.flow, authentication: decision.authentication },
        },
      };
  }
}

/**
 * Records a charge: one statement stores a new card, takes the duplicate check's fingerprint and
 * writes the ledger row and its event. Only the first-then-declined test card, whose outcome depends on the card's
 * earlier charges, needs a transaction that locks the card and reads them first.
 */
async function recordCharge(
  ctx: Ctx,
  uid: string,
  type: ChargeType,
  input: ChargeInput,
  now: Date,
): Promise<Recorded> {
  const card = await cardOf(ctx.db, ctx, input.card, now);
  const c: ChargeAttempt = { ctx, uid, type, input, card, now };
  const readsHistory = type !== 'credit' && behaviourOf(card.number).kind === 'first_then_declined';
  if (!readsHistory) return decideAndRecord(ctx.db, c, false);
  return ctx.db.tx(async (tx) => {
    await lockCardCharges(tx, ctx.shop.id, card.row.stamp);
    return decideAndRecord(tx, c, await hasSuccessfulCharge(tx, ctx.shop.id, card.row.stamp));
  });
}

/** One charge request on its way through the gateway. */
interface ChargeAttempt {
  ctx: Ctx;
  uid: string;
  type: ChargeType;
  input: ChargeInput;
  card: ChargeCard;
  now: Date;
}

/** A charge recorded: its ledger row and the answer the API gives (and its event carries). */
interface Recorded {
  row: TransactionRow;
  answer: TransactionAnswer;
}

/** A charge decided: the rows that record it, and what it is once they are written. */
interface Decided extends Recorded {
  charge: NewCharge;
}

/** The acquirer's decision on a charge and the rows that record it, before anything is written. */
function decide({ ctx, uid, type, input, card, now }: ChargeAttempt, chargedBefore: boolean): Decided {
  const transaction = baseRow(ctx, uid, type, input, card);
  const extra = { additional_data: input.additionalData };
  const threeDsActive = type !== 'credit' && ctx.shop.threeDs && !input.skipThreeDs;
  const decision =
    type === 'credit'
      ? decideCredit(card.number, card.expired)
      : decideCharge({ type, number: card.number, threeDsActive, chargedBefore, expired: card.expired });
  const avsCvc = avsCvcResult(input.billingAddress?.address, input.billingAddress?.zip, input.card.cvc);
  const rejected =
    input.avsCvcRules.avs.includes(avsCvc.avs_verification.result_code) ||
    input.avsCvcRules.cvc.includes(avsCvc.cvc_verification.result_code);
  const final: Decision =
    decision.outcome === 'successful' && rejected
      ? { outcome: 'failed', message: ChargeMsg.avsCvcRejected }
      : decision;
  const outcome = outcomeRow(type, final, now);
  const behaviour = behaviourOf(card.number).kind;
  const enrolled = behaviour === 'three_ds';
  const remembered = type !== 'credit' && behaviour === 'first_then_declined';
  transaction.status = outcome.status;
  transaction.message = outcome.message ?? null;
  transaction.paid_at = outcome.paid_at ?? null;
  transaction.avs_cvc = type === 'credit' ? null : (avsCvc as unknown as Record<string, unknown>);
  transaction.three_d_secure =
    outcome.three_d_secure ??
    (threeDsActive && !enrolled ? (notEnrolledVerification() as unknown as Record<string, unknown>) : null);
  transaction.details = {
    ...extra,
    ...outcome.details,
    // Indexed, so the next charge of this card finds it (hasSuccessfulCharge).
    ...(remembered ? { remembered_card: true } : {}),
  };
  // The answer is built once: the response and the event's payload are the same object.
  const row = storedTransactionRow(transaction, now);
  const answer = toAnswer(row, ctx.config.gatewayUrl);
  const charge: NewCharge = {
    card: card.unstored,
    fingerprint: {
      shopId: ctx.shop.id,
      type,
      stamp: card.row.stamp,
      amount: input.amount,
      currency: input.currency,
      trackingId: input.trackingId,
    },
    check: input.duplicateCheck && type !== 'credit',
    since: new Date(now.getTime() - DUPLICATE_WINDOW_MS),
    transaction,
    event: transactionAnnouncement(row, answer),
  };
  return { charge, row, answer };
}

async function decideAndRecord(db: Queryable, c: ChargeAttempt, chargedBefore: boolean): Promise<Recorded> {
  const decided = decide(c, chargedBefore);
  const { charge } = decided;
  if (await insertCharge(db, charge, c.now)) return decided;

  // A duplicate: the card (when new) is stored, the charge is recorded as declined, naming the first.
  const { card: _stored, ...again } = charge;
  let first = await firstChargeOf(db, charge.fingerprint);
  if (first === undefined) {
    // The first charge's window ended between the two statements: this one is no duplicate after all.
    if (await insertCharge(db, again, c.now)) return decided;
    first = (await firstChargeOf(db, charge.fingerprint)) ?? 'unknown';
  }
  const gatewayUrl = c.ctx.config.gatewayUrl;
  const row = await recordDuplicate(
    db,
    baseRow(c.ctx, c.uid, c.type, c.input, c.card),
    ChargeMsg.duplicate(first),
    first,
    { additional_data: c.input.additionalData },
    c.now,
    gatewayUrl,
  );
  return { row, answer: toAnswer(row, gatewayUrl) };
}

/**
 * Records a request the gateway declined as the duplicate of transaction `first`: failed, with no
 * acquirer answer, and `duplicate_of` so it never counts as the first of another duplicate. It is
 * announced like any failed transaction: the shop learns that its request was declined.
 */
export function recordDuplicate(
  db: Queryable,
  base: Omit<NewTransaction, 'status'>,
  message: string,
  first: string,
  details: Record<string, unknown>,
  now: Date,
  gatewayUrl: string,
): Promise<TransactionRow> {
  return insertAnnounced(
    db,
    {
      ...base,
      status: 'failed',
      message,
      details: {
        ...details,
        section: sectionFor(base.type as GatewayType, 'failed', message, false),
        duplicate_of: first,
      },
    },
    now,
    gatewayUrl,
  );
}

function logTransaction(ctx: Ctx, row: Pick<TransactionRow, 'uid' | 'type' | 'status'>): void {
  // Ids and outcome only: a log line never carries card data.
  ctx.log.info(
    { uid: row.uid, type: row.type, status: row.status, shop_id: ctx.shop.id },
    'gateway transaction',
  );
}

const timedOut = (row: TransactionRow) => row.status === 'pending' && row.details.acquirer_timeout === true;

async function run(ctx: Ctx, body: unknown, type: ChargeType): Promise<TransactionAnswer> {
  const now = ctx.clock.now();
  const input = parseCharge(requestOf(body), now, { requireCvc: type !== 'credit' });
  const uid = randomUUID();
  const { row, answer } = await recordCharge(ctx, uid, type, input, now);
  logTransaction(ctx, row);
  // Recorded as pending first, so a query by tracking_id finds it: the caller's way out of the unknown.
  if (timedOut(row)) throw new GatewayTimeout(uid, input.trackingId);
  return answer;
}

/**
 * A payment decided but not yet written: `statements` record it and its event (and store a new card),
 * for the caller to run in one batch with rows of its own, so that the payment and what it pays for
 * commit together. `answer` is what the payment answers once they ran; for the timeout card it is
 * the pending transaction (`timedOut`), which payment() would report as a GatewayTimeout.
 */
export interface PlannedPayment {
  statements: Statement[];
  answer: TransactionAnswer;
  card: CardRecord;
  timedOut: boolean;
  /** Call once the statement committed. */
  recorded(): void;
}

/**
 * Decides a payment without writing it, for a caller on the same store (the in-process gateway
 * client). Undefined when a payment cannot be planned: one with duplicate_check on (its outcome
 * depends on the charges committed when it runs) or with the card whose outcome depends on its earlier
 * charges. Invalid requests reject exactly as payment() does.
 */
export async function planPayment(
  ctx: Ctx,
  body: unknown,
  known?: KnownCards,
): Promise<PlannedPayment | undefined> {
  const now = ctx.clock.now();
  const input = parseCharge(requestOf(body), now, { requireCvc: true });
  if (input.duplicateCheck) return undefined;
  const card = await cardOf(ctx.db, ctx, input.card, now, known);
  if (behaviourOf(card.number).kind === 'first_then_declined') return undefined;
  const { charge, row, answer } = decide(
    { ctx, uid: randomUUID(), type: 'payment', input, card, now },
    false,
  );
  return {
    // The caller has the row already (`answer`): nothing is read back. The payment's event is
    // written beside it, so the payment and its announcement commit together.
    statements: plannedChargeStatements(charge, now),
    answer,
    card: toCardRecord(card.row),
    timedOut: timedOut(row),
    recorded: () => logTransaction(ctx, row),
  };
}

/** `POST /transactions/payments`: authorization and capture at once. */
export function pay(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'payment');
}

/** `POST /transactions/authorizations`: reserves the amount until a capture or a void. */
export function authorize(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'authorization');
}

/** `POST /transactions/credits`: sends money to the card. */
export function credit(ctx: Ctx, body: unknown): Promise<TransactionAnswer> {
  return run(ctx, body, 'credit');
}
