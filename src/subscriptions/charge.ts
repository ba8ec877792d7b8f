import { type CardInput, CardMsg, type CardRecord } from '../cards/index.js';
import {
  firstChargeRequest,
  resumeAttempt,
  storedCardRequest,
  takeAttempt,
  tokenizeCard as tokenizeWithGateway,
} from '../charging/index.js';
import type { Ctx } from '../context.js';
import { ApiError, type ErrorTree } from '../core/errors.js';
import type { Plan } from '../plans/index.js';
import { CARD_NOT_FOUND } from './input.js';
import type { SubscriptionRow } from './repository.js';
import { CHARGE_LEASE_MS, isCardVerification } from './schedule.js';
import { subscriptionSubject } from './subject.js';

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
    return await tokenizeWithGateway(ctx, request);
  } catch (err) {
    throw asCardErrors(err);
  }
}

/**
 * Takes a claimed first charge (the trial's, a free trial's card verification, or the first
 * period's) through the gateway and records
 * what it answered (charging/attempt.ts). Whatever happens, the answer is a subscription, never an
 * exception: the subscription already exists, and a client that saw an error would retry and pay
 * twice. `returnUrl`: where a 3-D Secure step sends the cardholder instead of the shop's return_url
 * (the hosted checkout page, which shows the outcome before sending them on). `resume`: the attempt
 * was claimed by a run that stopped before recording it (charging: resumeAttempt).
 */
export async function takeFirstCharge(
  ctx: Ctx,
  sub: SubscriptionRow,
  plan: Plan,
  charge: { period: number; amount: number },
  cvc: string | undefined,
  returnUrl?: string,
  resume = false,
): Promise<SubscriptionRow> {
  const card = storedCardRequest(sub.card_token as string, cvc);
  // A free trial's first charge on a shop with 3-D Secure verifies the card (schedule.ts).
  const kind = isCardVerification(plan, charge.period) ? 'verification' : 'payment';
  const taken = await (resume ? resumeAttempt : takeAttempt)(
    ctx,
    subscriptionSubject(ctx, sub.id, plan),
    { period: charge.period, attempt: 1 },
    firstChargeRequest(sub, plan, charge, card, returnUrl, kind),
    () => new Date(ctx.clock.now().getTime() + CHARGE_LEASE_MS),
    kind,
  );
  return taken.subject;
}
