import { type CardInput, type CardRecord, validateCardInput } from '../cards/index.js';
import { claimCharge } from '../charging/index.js';
import { type Ctx, type Services, shopCtx } from '../context.js';
import { ApiError, ErrorCollector, type ErrorTree } from '../core/errors.js';
import { insertCustomer, validateCustomer } from '../customers/index.js';
import { newId } from '../ids.js';
import { checkoutUrl } from '../pages/checkout-url.js';
import { type FrameMode, withFrameMode } from '../pages/frame-mode.js';
import { findPlanOfShop, type Plan } from '../plans/index.js';
import { shopById } from '../shops/index.js';
import { takeFirstCharge, tokenizeCard } from './charge.js';
import { type CheckoutRow, completeCheckout, findCheckout, lockCheckout } from './hosted-pages.js';
import { findSubscription, lockSubscription, type SubscriptionRow } from './repository.js';
import { rulesFor } from './rules.js';
import { CHARGE_LEASE_MS, firstSchedule } from './schedule.js';
import { settleOpenCharge } from './settle.js';
import { applyTransition, changeInstant } from './state.js';
import { transition } from './transitions.js';

/**
 * The hosted page of a redirect subscription, as verbs: what the page shows for a token, and paying
 * there. Paying makes the subscription exactly what the card variant would have made it at that
 * moment: the card tokenized by the gateway, the first schedule, the first charge claimed and taken by
 * `takeFirstCharge`, every change applied by the one writer with the same events.
 *
 * The contract decides what a declined card does: the very first charge that fails cancels the
 * subscription (the seed's transition table), so a declined card ends this page too. A card the
 * gateway refuses before charging (a wrong number, an expired card) charges nothing: the page shows
 * the problem and the token stays usable until it expires.
 */

export interface SubscriptionCheckout {
  ctx: Ctx;
  checkout: CheckoutRow;
  sub: SubscriptionRow;
  plan: Plan;
  /** Expired unpaid: nobody can pay here any more. */
  expired: boolean;
  /** The subscription still waits for its card here. */
  open: boolean;
}

/** The checkout of `token` and its subscription, with any charge left open settled; undefined when unknown. */
export async function loadSubscriptionCheckout(
  services: Services,
  token: string,
): Promise<SubscriptionCheckout | undefined> {
  const checkout = await findCheckout(services.db, token);
  if (!checkout?.subscription_id) return undefined;
  const shop = await shopById(services.db, checkout.shop_id);
  if (!shop) return undefined;
  const ctx = shopCtx(services, shop);
  let sub = await findSubscription(services.db, checkout.shop_id, checkout.subscription_id);
  const plan = sub && (await findPlanOfShop(ctx, sub.plan_id));
  if (!sub || !plan) return undefined;
  // Back from 3-D Secure, or a charge whose answer was lost: the gateway tells how it ended.
  sub = await settleOpenCharge(ctx, sub);
  const waiting = sub.state === 'redirecting' && !sub.card_token && !sub.cancelled_at;
  const expired = waiting && checkout.expires_at.getTime() <= ctx.clock.now().getTime();
  return { ctx, checkout, sub, plan, expired, open: waiting && !expired };
}

export interface CheckoutForm {
  card: Record<string, unknown>;
  /** The buyer's details, when the subscription has no customer yet. */
  customer?: Record<string, unknown>;
  ip: string;
  /** The page is in a frame on the shop's page (`iframe=` mode): 3-D Secure returns to it so. */
  frame?: FrameMode | undefined;
}

export type PayOutcome =
  | { kind: 'invalid'; errors: ErrorTree }
  /** Paid, or paid already by another post of the form: the page shows the subscription as it is. */
  | { kind: 'done'; sub: SubscriptionRow }
  | { kind: 'expired' };

/** The form's card, as the gateway's card rules check it (the CVC is needed: the cardholder is here). */
function checkForm(sc: SubscriptionCheckout, form: CheckoutForm) {
  const errors = new ErrorCollector();
  const card = validateCardInput(form.card, errors, ['credit_card'], {
    now: sc.ctx.clock.now(),
    requireCvc: true,
  });
  const customer =
    sc.sub.customer_id === null
      ? validateCustomer({ ...(form.customer ?? {}), ip: form.ip }, errors, ['customer'])
      : undefined;
  return { errors, card, customer };
}

/** The card's record in the gateway's vault; the gateway's refusals come back as the form's errors. */
async function vaultCard(ctx: Ctx, card: CardInput): Promise<{ card: CardRecord } | { errors: ErrorTree }> {
  try {
    return { card: await tokenizeCard(ctx, card) };
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'validation') throw err;
    const tree = err.errors.card;
    return { errors: { credit_card: tree && !Array.isArray(tree) ? tree : { base: tree ?? [] } } };
  }
}

/**
 * Pays the page of `sc` with the posted form. Two posts of one form (a double click, two tabs) charge
 * once: the subscription is locked while its card is attached and its first charge claimed, and the
 * second post finds it no longer waiting and answers it as the first left it.
 */
export async function paySubscriptionCheckout(
  sc: SubscriptionCheckout,
  form: CheckoutForm,
): Promise<PayOutcome> {
  const { ctx, plan } = sc;
  if (!sc.open) return sc.expired ? { kind: 'expired' } : { kind: 'done', sub: sc.sub };
  const checked = checkForm(sc, form);
  if (!checked.errors.empty || !checked.card) return { kind: 'invalid', errors: checked.errors.tree };
  const vaulted = await vaultCard(ctx, checked.card);
  if ('errors' in vaulted) return { kind: 'invalid', errors: vaulted.errors };
  const card = vaulted.card;

  const claimed = await ctx.db.tx(async (tx) => {
    // Lock order as a cancel's: the subscription, then its page.
    const sub = await lockSubscription(tx, ctx.shop.id, sc.sub.id);
    const checkout = await lockCheckout(tx, sc.checkout.token);
    if (!checkout || !sub) throw new Error(`checkout ${sc.checkout.token} vanished while it was paid`);
    const now = changeInstant(sub, ctx.clock.now());
    if (sub.state === 'redirecting' && !sub.card_token && checkout.expires_at.getTime() <= now.getTime())
      return { kind: 'expired' as const };
    // In the zone the subscription was created in, whatever the shop's zone is now.
    const schedule = firstSchedule(plan, now, sub.time_zone, ctx.shop.threeDs);
    const customerId = checked.customer && !sub.customer_id ? newId('cst') : null;
    const t = transition(
      sub,
      plan,
      { kind: 'checkout_paid', card, customerId, schedule, lease: new Date(now.getTime() + CHARGE_LEASE_MS) },
      now,
      rulesFor(ctx.shop),
    );
    // Paid by another post meanwhile, or cancelled: nothing more to do here.
    if (Object.keys(t.change).length === 0) return { kind: 'done' as const, sub, charge: null };
    if (customerId && checked.customer)
      await insertCustomer(tx, ctx.shop.id, { id: customerId, ...checked.customer }, now);
    const row = await applyTransition(tx, sub, plan, t, now);
    if (schedule.charge) {
      const claim = {
        shopId: sub.shop_id,
        subscriptionId: sub.id,
        period: schedule.charge.period,
        attempt: 1,
      };
      await claimCharge(tx, { ...claim, amount: schedule.charge.amount, currency: plan.currency }, now);
    }
    await completeCheckout(tx, checkout.token, now);
    return { kind: 'done' as const, sub: row, charge: schedule.charge };
  });
  if (claimed.kind === 'expired') return claimed;
  if (!claimed.charge) return { kind: 'done', sub: claimed.sub };
  const back = withFrameMode(checkoutUrl(ctx.config.checkoutUrl, sc.checkout.token), form.frame);
  const cvc = checked.card.cvc;
  const sub = await takeFirstCharge(ctx, claimed.sub, plan, claimed.charge, cvc, back);
  return { kind: 'done', sub };
}
