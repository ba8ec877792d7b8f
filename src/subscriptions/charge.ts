import { type CardInput, CardMsg } from '../cards/validation.js';
import { lockOpenCharge } from '../charging/index.js';
import type { Ctx } from '../context.js';
import { ApiError, type ErrorTree } from '../core/errors.js';
import {
  type AvsCvcRequest,
  type CardRecord,
  type CardRequest,
  type ChargeRequest,
  GatewayTimeout,
  gatewayClient,
  type TransactionAnswer,
} from '../gateway/client.js';
import type { Plan } from '../plans/service.js';
import { CARD_NOT_FOUND } from './input.js';
import { lockSubscription, type SubscriptionRow } from './repository.js';
import { rulesFor } from './rules.js';
import { CHARGE_LEASE_MS } from './schedule.js';
import { applyChargeAnswer, chargeTrackingId } from './settle.js';
import { applyTransition } from './state.js';
import { type Happened, transition } from './transitions.js';
import { summarize } from './view.js';

/** The gateway's limit on a payment's description. */
const DESCRIPTION_MAX = 255;

/** The payment's description: the plan's title, shortened so the gateway's limit never refuses a charge. */
export function chargeDescription(title: string, subscriptionId: string): string {
  const suffix = ` (subscription ${subscriptionId})`;
  const room = DESCRIPTION_MAX - suffix.length;
  if (title.length <= room) return `${title}${suffix}`;
  let cut = title.slice(0, room - 1);
  // Never leave half of a surrogate pair behind: the store refuses it.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…${suffix}`;
}

/**
 * Where the cardholder returns after a 3-D Secure step: the shop's return_url with the subscription
 * id in `id` (seed Rule 4), added with `&` when the URL has a query already, before any fragment.
 */
export function returnUrlWithId(url: string, subscriptionId: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const joiner = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${joiner}id=${encodeURIComponent(subscriptionId)}${fragment}`;
}

/**
 * The gateway reports card errors in its own terms: under `credit_card` or flat (`token`, `number`)
 * depending on how it was asked. The subscription request calls the card `card`, and an unknown
 * token (also another shop's) is `errors.card.base`, as unknown customers and plans are.
 */
function asCardErrors(err: unknown): unknown {
  if (!(err instanceof ApiError) || err.code !== 'validation') return err;
  const nested = err.errors.credit_card;
  const tree: ErrorTree = nested && !Array.isArray(nested) ? nested : err.errors;
  const token = tree.token;
  if (Array.isArray(token) && token.includes(CardMsg.unknownToken)) {
    return ApiError.validation({ card: { base: [CARD_NOT_FOUND] } });
  }
  return ApiError.validation({ card: tree });
}

/** The card's record from the gateway's vault: a full card gets a new token, a token is looked up. */
export async function tokenizeCard(ctx: Ctx, card: CardInput): Promise<CardRecord> {
  const request =
    card.kind === 'token'
      ? { token: card.token }
      : {
          number: card.number,
          holder: card.holder,
          exp_month: String(card.expMonth).padStart(2, '0'),
          exp_year: String(card.expYear),
        };
  try {
    return await gatewayClient(ctx).tokenize(request);
  } catch (err) {
    throw asCardErrors(err);
  }
}

/** The gateway payment of a subscription's first charge (the trial's or the first period's). */
export function firstChargeRequest(
  sub: Pick<SubscriptionRow, 'id' | 'language' | 'return_url' | 'avs_cvc_verification'>,
  plan: Plan,
  charge: { period: number; amount: number },
  card: CardRequest,
  returnUrl?: string,
): ChargeRequest {
  const back = returnUrl ?? (sub.return_url ? returnUrlWithId(sub.return_url, sub.id) : undefined);
  return {
    amount: charge.amount,
    currency: plan.currency,
    description: chargeDescription(plan.title, sub.id),
    tracking_id: chargeTrackingId(sub.id, charge.period),
    language: sub.language,
    ...(back ? { return_url: back } : {}),
    // The shop's AVS/CVC rules apply to the first charge, the only one made with the cardholder's CVC.
    ...(sub.avs_cvc_verification ? { avs_cvc_verification: sub.avs_cvc_verification as AvsCvcRequest } : {}),
    test: plan.test,
    // The charge's claim row already makes a repeat impossible; the gateway's 30-second check
    // would only get in the way of a legitimate retry of another period.
    duplicate_check: false,
    credit_card: card,
    additional_data: { subscription_id: sub.id, billing_period: charge.period },
  };
}

/** The card of a subscription request as the gateway takes it: in full, or its token (with the CVC). */
export function cardRequest(card: CardInput): CardRequest {
  if (card.kind === 'token')
    return { token: card.token, ...(card.cvc ? { verification_value: card.cvc } : {}) };
  return {
    number: card.number,
    ...(card.cvc ? { verification_value: card.cvc } : {}),
    holder: card.holder,
    exp_month: String(card.expMonth).padStart(2, '0'),
    exp_year: String(card.expYear),
  };
}

/**
 * Takes a claimed first charge (the trial's or the first period's) through the gateway and records
 * what it answered. Whatever happens, the answer is a subscription, never an exception: the
 * subscription already exists, and a client that saw an error would retry and pay twice.
 * `returnUrl`: where a 3-D Secure step sends the cardholder instead of the shop's return_url (the
 * hosted checkout page, which shows the outcome before sending them on).
 */
export async function takeFirstCharge(
  ctx: Ctx,
  sub: SubscriptionRow,
  plan: Plan,
  charge: { period: number; amount: number },
  cvc: string | undefined,
  returnUrl?: string,
): Promise<SubscriptionRow> {
  const gateway = gatewayClient(ctx);
  const attempt = { period: charge.period, attempt: 1 };
  let answer: TransactionAnswer;
  try {
    answer = await gateway.payment(
      firstChargeRequest(
        sub,
        plan,
        charge,
        {
          token: sub.card_token as string,
          ...(cvc ? { verification_value: cvc } : {}),
        },
        returnUrl,
      ),
    );
  } catch (err) {
    if (err instanceof ApiError) {
      ctx.log.warn({ subscription: sub.id, errors: err.errors }, 'the gateway refused a first charge');
      return settle(ctx, sub, plan, attempt, {
        kind: 'charge_answered',
        period: charge.period,
        outcome: 'refused',
        last: null,
        message: err.message,
      });
    }
    if (!(err instanceof GatewayTimeout)) {
      ctx.log.error(
        { err, subscription: sub.id },
        'first charge failed without an answer; its outcome is resolved by query',
      );
    }
    return unknownOutcome(ctx, sub, plan, attempt, err instanceof GatewayTimeout ? err.uid : undefined);
  }
  return ctx.db.tx((tx) => applyChargeAnswer(tx, ctx, sub.id, plan, attempt, answer));
}

/** Applies what happened to an open attempt, once (a settled attempt is left as it is). */
function settle(
  ctx: Ctx,
  sub: SubscriptionRow,
  plan: Plan,
  attempt: { period: number; attempt: number },
  happened: Happened,
  uid: string | null = null,
): Promise<SubscriptionRow> {
  return ctx.db.tx(async (tx) => {
    const locked = (await lockSubscription(tx, ctx.shop.id, sub.id)) ?? sub;
    if (!(await lockOpenCharge(tx, sub.id, attempt.period, attempt.attempt))) return locked;
    const now = ctx.clock.now();
    const t = transition(locked, plan, happened, now, rulesFor(ctx.shop));
    return applyTransition(tx, locked, plan, t, now, { ...attempt, uid });
  });
}

/**
 * No answer in time: the money may or may not have moved. The subscription stays processing and the
 * charge is marked for a query (settleOpenCharge), never charged again blindly. The pending
 * transaction, when the gateway has one, is shown so the shop knows which uid to watch.
 */
async function unknownOutcome(
  ctx: Ctx,
  sub: SubscriptionRow,
  plan: Plan,
  attempt: { period: number; attempt: number },
  uid: string | undefined,
): Promise<SubscriptionRow> {
  const pending = uid
    ? await gatewayClient(ctx)
        .query(uid)
        .catch(() => undefined)
    : undefined;
  return settle(
    ctx,
    sub,
    plan,
    attempt,
    {
      kind: 'charge_unknown',
      period: attempt.period,
      last: pending ? summarize(pending) : null,
      recheckAt: new Date(ctx.clock.now().getTime() + CHARGE_LEASE_MS),
    },
    uid ?? null,
  );
}
