/**
 * A redirect subscription whose hosted page expired unpaid: its expiry is announced once (event
 * `checkout_expired.subscription`, to the subscription's notification_url) and the subscription ends
 * (canceled) at the page's expiry on its shop's clock. The checkout expiry sweep runs it, batch by
 * batch, beside the checkout API's own expiries (checkout/expiry.ts).
 */
import type { Tx } from '../db/db.js';
import { eventInsert } from '../notifications/index.js';
import { findPlans, toPlan } from '../plans/index.js';
import { shopById } from '../shops/index.js';
import { claimExpiredCheckouts } from './hosted-pages.js';
import { lockSubscription } from './repository.js';
import { rulesFor } from './rules.js';
import { applyTransition, changedRow } from './state.js';
import { transition } from './transitions.js';
import { toSubscription } from './view.js';

/**
 * Claims up to `limit` expired pages (only `shopId`'s, when given) and announces each in the
 * caller's transaction; `message` is the checkout page's word for an expired token. Answers how many
 * pages it claimed (0: none left).
 */
export async function announceExpiredPages(
  tx: Tx,
  realNow: Date,
  limit: number,
  message: string,
  shopId?: number,
): Promise<number> {
  const rows = await claimExpiredCheckouts(tx, realNow, limit, shopId);
  for (const checkout of rows) {
    if (!checkout.subscription_id) continue;
    const sub = await lockSubscription(tx, checkout.shop_id, checkout.subscription_id);
    // Only a subscription still waiting for its card is told about: a cancelled one closed its page.
    if (sub?.state !== 'redirecting' || sub.card_token || sub.cancelled_at) continue;
    const [planRow] = await findPlans(tx, checkout.shop_id, [sub.plan_id]);
    const plan = planRow && toPlan(planRow);
    // Nobody will pay it now: the subscription ends (canceled), at the page's expiry on its shop's clock.
    const shop = await shopById(tx, checkout.shop_id);
    if (!shop) continue;
    const rules = rulesFor(shop);
    const ended = transition(sub, plan, { kind: 'checkout_expired' }, checkout.expires_at, rules);
    const view = toSubscription({
      row: changedRow(sub, ended, checkout.expires_at),
      plan,
      customer: undefined,
      checkout: undefined,
    });
    const event = 'checkout_expired.subscription';
    const s = eventInsert({
      shopId: sub.shop_id,
      resourceType: 'subscription',
      resourceId: sub.id,
      event,
      payload: {
        ...view,
        event,
        checkout: { token: checkout.token, expired: true, message },
      },
      url: sub.notification_url,
      now: checkout.expires_at,
    });
    await tx.query(s);
    await applyTransition(tx, sub, plan, ended, checkout.expires_at);
  }
  return rows.length;
}
