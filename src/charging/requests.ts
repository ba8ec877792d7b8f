import type { CardInput } from '../cards/index.js';
import type { AvsCvcRequest, CardRequest, ChargeRequest } from '../gateway/index.js';
import type { Plan } from '../plans/index.js';

/**
 * Every gateway request a subscription's charge makes, built in one place: the first charge (card,
 * token, hosted page), a renewal, their tracking ids, descriptions and idempotency keys.
 */

/**
 * What a charge attempt asks of the gateway: a payment takes money; a verification (a free trial's
 * first charge on a shop with 3-D Secure) authorizes the smallest amount through the same checks,
 * 3-D Secure included, and the authorization is released at once (send.ts: releaseVerification).
 */
export type ChargeKind = 'payment' | 'verification';

/** What a charge request needs to know of its subscription. */
export interface ChargedSubscription {
  id: string;
  language: string;
  return_url: string | null;
  avs_cvc_verification: unknown;
  card_token: string | null;
}

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
 * The gateway's tracking id of one charge attempt: unique, so an unknown outcome is resolved by query.
 * The first attempt of a period keeps the plain form `sbs_…-N`.
 */
export function chargeTrackingId(subscriptionId: string, period: number, attempt = 1): string {
  return attempt === 1 ? `${subscriptionId}-${period}` : `${subscriptionId}-${period}-${attempt}`;
}

/**
 * The gateway idempotency key of one charge attempt, derived from its tracking id (never stored): a
 * resend of the attempt after a crash gets the gateway's first answer instead of a second charge.
 */
export function chargeGatewayKey(subscriptionId: string, period: number, attempt = 1): string {
  return `kopek-charge:${chargeTrackingId(subscriptionId, period, attempt)}`;
}

/**
 * The gateway request of a subscription's first charge (the trial's or the first period's): a
 * payment, or the authorization of a card verification.
 */
export function firstChargeRequest(
  sub: Omit<ChargedSubscription, 'card_token'>,
  plan: Plan,
  charge: { period: number; amount: number },
  card: CardRequest,
  returnUrl?: string,
  kind: ChargeKind = 'payment',
): ChargeRequest {
  const back = returnUrl ?? (sub.return_url ? returnUrlWithId(sub.return_url, sub.id) : undefined);
  const title = kind === 'verification' ? `Card verification: ${plan.title}` : plan.title;
  return {
    amount: charge.amount,
    currency: plan.currency,
    description: chargeDescription(title, sub.id),
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

/** A stored card as a first charge sends it: its token, with the CVC while the cardholder is there. */
export function storedCardRequest(token: string, cvc: string | undefined): CardRequest {
  return { token, ...(cvc ? { verification_value: cvc } : {}) };
}

/** The gateway payment of a renewal attempt: the stored card, no cardholder present. */
export function renewalRequest(
  sub: Pick<ChargedSubscription, 'id' | 'language' | 'card_token'>,
  plan: Plan,
  period: number,
  attempt: number,
): ChargeRequest {
  return {
    amount: plan.plan.amount,
    currency: plan.currency,
    description: chargeDescription(plan.title, sub.id),
    tracking_id: chargeTrackingId(sub.id, period, attempt),
    language: sub.language,
    test: plan.test,
    // The attempt's key already makes a repeat impossible.
    duplicate_check: false,
    // A merchant-initiated charge of a stored card: nobody is there to pass 3-D Secure.
    credit_card: { token: sub.card_token as string, skip_three_d_secure_verification: true },
    additional_data: { subscription_id: sub.id, billing_period: period, attempt },
  };
}
