import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { type CustomerRow, findCustomer, findCustomers } from '../customers/index.js';
import { checkoutUrl } from '../pages/checkout-url.js';
import { findPlanOfShop, findPlans, type Plan, toPlan } from '../plans/index.js';
import { checkoutOfSubscription } from './hosted-pages.js';
import {
  findSubscription,
  listSubscriptions,
  type SubscriptionFilter,
  type SubscriptionRow,
} from './repository.js';
import { settleOpenCharge } from './settle.js';
import { type Subscription, toSubscription } from './view.js';

/**
 * A subscription as the API answers it, read: one by id (an open charge settled first, as any read
 * does) or a page of the shop's, and the view of a row with its plan, customer and hosted page.
 */

/** The plan and customer of a subscription when the caller has them already: not read again. */
interface Known {
  plan: Plan;
  customer: CustomerRow | undefined;
}

export async function viewOf(ctx: Ctx, row: SubscriptionRow, known?: Known): Promise<Subscription> {
  const [plan, customer, checkout] = await Promise.all([
    known?.plan ?? findPlanOfShop(ctx, row.plan_id),
    known ? known.customer : row.customer_id ? findCustomer(ctx.db, ctx.shop.id, row.customer_id) : undefined,
    row.state === 'redirecting' && !row.card ? checkoutOfSubscription(ctx.db, row.id) : undefined,
  ]);
  // The store never deletes a plan or customer, so a missing one is damage for the operator to see;
  // the shop still gets its subscription, the missing part named by id (toSubscription).
  if (!plan || (row.customer_id && !customer)) {
    ctx.log.error(
      {
        subscription: row.id,
        ...(plan ? {} : { missing_plan: row.plan_id }),
        ...(row.customer_id && !customer ? { missing_customer: row.customer_id } : {}),
      },
      'a subscription refers to a row the store does not have',
    );
  }
  return toSubscription({
    row,
    plan,
    customer,
    checkout: checkout && { url: checkoutUrl(ctx.config.checkoutUrl, checkout.token), token: checkout.token },
  });
}

export async function getSubscription(ctx: Ctx, id: string): Promise<Subscription> {
  let row = await findSubscription(ctx.db, ctx.shop.id, id);
  if (!row) throw ApiError.notFound();
  row = await settleOpenCharge(ctx, row);
  return viewOf(ctx, row);
}

export async function listSubscriptionsOfShop(
  ctx: Ctx,
  filter: SubscriptionFilter,
  limit: number,
  startingAfter: string | undefined,
): Promise<Subscription[]> {
  const rows = await listSubscriptions(ctx.db, ctx.shop.id, filter, limit, startingAfter);
  // One query each for the page's plans and customers, not two per subscription.
  const unique = (ids: (string | null)[]) => [...new Set(ids.filter((id): id is string => id !== null))];
  const [plans, customers] = await Promise.all([
    findPlans(ctx.db, ctx.shop.id, unique(rows.map((r) => r.plan_id))),
    findCustomers(ctx.db, ctx.shop.id, unique(rows.map((r) => r.customer_id))),
  ]);
  const planById = new Map(plans.map((p) => [p.id, toPlan(p)]));
  const customerById = new Map(customers.map((c) => [c.id, c]));
  return Promise.all(
    rows.map((r) => {
      const plan = planById.get(r.plan_id);
      const customer = r.customer_id ? customerById.get(r.customer_id) : undefined;
      return viewOf(ctx, r, plan && { plan, customer });
    }),
  );
}
