import { randomUUID } from 'node:crypto';
import { toCardRecord } from '../cards/vault.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../db/db.js';
import { insertTransaction, type NewTransaction, type TransactionRow } from '../ledger/repository.js';
import {
  avsCvcResult,
  type Decision,
  decideCharge,
  decideCredit,
  notEnrolledVerification,
  pendingVerification,
} from './acquirer.js';
import { PROCESSED, sectionFor, type TransactionAnswer, toAnswer } from './answer.js';
import { type ChargeCard, cardOf } from './card-source.js';
import { GatewayTimeout } from './errors.js';
import { type ChargeInput, parseCharge, requestOf } from './input.js';
import { findDuplicateCharge, hasSuccessfulCharge, lockCardCharges } from './repository.js';
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
): NewTransaction {
  return {
    uid,
    shop_id: ctx.shop.id,
    type,
    status: 'pending',
    amount: input.amount,
    currency: input.currency,
    description: input.description,
    tracking_id: input.trackingId,
    test: ctx.shop.test || input.test === true,
    language: input.language,
    card_token: card.row.token,
    card: toCardRecord(card.row) as unknown as Record<string, unknown>,
    billing_address: input.billingAddress as Record<string, unknown> | null,
    customer: input.customer as Record<string, unknown> | null,
    return_url: input.returnUrl,
    notification_url: input.notificationUrl,
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

async function recordCharge(tx: Tx, ctx: Ctx, uid: string, type: ChargeType, input: ChargeInput, now: Date) {
  const card = await cardOf(tx, ctx, input.card, now);
  const checksDuplicates = input.duplicateCheck && type !== 'credit';
  // Only the first-then-declined test card depends on the card's history.
  const readsHistory = type !== 'credit' && behaviourOf(card.number).kind === 'first_then_declined';
  // The lock only makes those two reads see every earlier charge of the card; a charge that makes
  // neither (a subscription's, sent with duplicate_check false) needs no lock and no round trip.
  if (checksDuplicates || readsHistory) await lockCardCharges(tx, ctx.shop.id, card.row.stamp);
  const base = baseRow(ctx, uid, type, input, card);
  const extra = { additional_data: input.additionalData };

  if (checksDuplicates) {
    const first = await findDuplicateCharge(
      tx,
      {
        shopId: ctx.shop.id,
        type,
        stamp: card.row.stamp,
        amount: input.amount,
        currency: input.currency,
        trackingId: input.trackingId,
      },
      new Date(now.getTime() - DUPLICATE_WINDOW_MS),
    );
    if (first) {
      const message = ChargeMsg.duplicate(first);
      return insertTransaction(
        tx,
        {
          ...base,
          status: 'failed',
          message,
          details: { ...extra, section: sectionFor(type, 'failed', message, false), duplicate_of: first },
        },
        now,
      );
    }
  }

  const threeDsActive = type !== 'credit' && ctx.shop.threeDs && !input.skipThreeDs;
  const decision =
    type === 'credit'
      ? decideCredit(card.number, card.expired)
      : decideCharge({
          number: card.number,
          threeDsActive,
          chargedBefore: readsHistory && (await hasSuccessfulCharge(tx, ctx.shop.id, card.row.stamp)),
          expired: card.expired,
        });
  const avsCvc = avsCvcResult(input.billingAddress?.address, input.billingAddress?.zip, input.card.cvc);
  const rejected =
    input.avsCvcRules.avs.includes(avsCvc.avs_verification.result_code) ||
    input.avsCvcRules.cvc.includes(avsCvc.cvc_verification.result_code);
  const final: Decision =
    decision.outcome === 'successful' && rejected
      ? { outcome: 'failed', message: ChargeMsg.avsCvcRejected }
      : decision;
  const outcome = outcomeRow(type, final, now);
  const enrolled = behaviourOf(card.number).kind === 'three_ds';
  return insertTransaction(
    tx,
    {
      ...base,
      ...outcome,
      avs_cvc: type === 'credit' ? null : (avsCvc as unknown as Record<string, unknown>),
      three_d_secure:
        outcome.three_d_secure ??
        (threeDsActive && !enrolled
          ? (notEnrolledVerification() as unknown as Record<string, unknown>)
          : null),
      details: { ...extra, ...outcome.details },
    },
    now,
  );
}

async function run(ctx: Ctx, body: unknown, type: ChargeType): Promise<TransactionAnswer> {
  const now = ctx.clock.now();
  const input = parseCharge(requestOf(body), now, { requireCvc: type !== 'credit' });
  const uid = randomUUID();
  const row: TransactionRow = await ctx.db.tx((tx) => recordCharge(tx, ctx, uid, type, input, now));
  // Ids and outcome only: a log line never carries card data.
  ctx.log.info({ uid, type, status: row.status, shop_id: ctx.shop.id }, 'gateway transaction');
  // Recorded as pending first, so a query by tracking_id finds it: the caller's way out of the unknown.
  if (row.status === 'pending' && row.details.acquirer_timeout === true)
    throw new GatewayTimeout(uid, input.trackingId);
  return toAnswer(row, ctx.config.gatewayUrl);
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
