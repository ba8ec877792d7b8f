import { localDayOfMonth } from '../calendar/interval.js';
import type { CardInput, CardRecord } from '../cards/index.js';
import {
  answeredChargeInsert,
  cardRequest,
  claimCharge,
  endAttempt,
  endOpenAttempts,
  firstChargeRequest,
  openCharge,
  planCharge,
  plannedEventOf,
} from '../charging/index.js';
import { fixedClock } from '../clock.js';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { checkBody } from '../core/schema-check.js';
import { type CustomerRow, customerInsert, insertCustomer, newCustomerRow } from '../customers/index.js';
import type { Statement } from '../db/db.js';
import { writeGrouped } from '../db/grouped.js';
import { newId } from '../ids.js';
import { checkoutUrl } from '../pages/checkout-url.js';
import {
  findPlanOfShop,
  newPlanRow,
  type PlanData,
  type PlanRow,
  planInsert,
  savePlan,
  toPlan,
} from '../plans/index.js';
import { takeFirstCharge, tokenizeCard } from './charge.js';
import { closeCheckoutsOf, openCheckout } from './hosted-pages.js';
import { CancelInput, checkSubscriptionInput, type SubscriptionInput } from './input.js';
import { viewOf } from './read.js';
import { findSubscription, lockSubscription, type NewSubscription } from './repository.js';
import { rulesFor } from './rules.js';
import { CHARGE_LEASE_MS, type FirstSchedule, firstSchedule, isCardVerification } from './schedule.js';
import { settleOpenCharge } from './settle.js';
import {
  applyTransition,
  changedRow,
  changeInstant,
  insertStatement,
  insertSubscription,
  newSubscriptionRow,
  subscriptionEventsInsert,
} from './state.js';
import { subscriptionSubject } from './subject.js';
import { type SubscriptionEvent, transition } from './transitions.js';
import { type Subscription, toSubscription } from './view.js';

const CREATED = ['created.subscription'] as const;
const CREATED_IN_TRIAL: readonly (SubscriptionEvent | 'created.subscription')[] = [
  'created.subscription',
  'trial_started.subscription',
];

/** The subscription row a request asks for, before its first charge. */
function newSubscription(
  ctx: Ctx,
  input: SubscriptionInput,
  p: {
    id: string;
    planId: string;
    customerId: string | null;
    card: CardRecord | undefined;
    schedule: FirstSchedule | undefined;
    now: Date;
  },
): NewSubscription {
  return {
    id: p.id,
    shop_id: ctx.shop.id,
    plan_id: p.planId,
    customer_id: p.customerId,
    card_token: p.card?.token ?? null,
    card: p.card ?? null,
    state: p.schedule?.state ?? 'redirecting',
    tracking_id: input.trackingId,
    device_id: input.deviceId,
    return_url: input.returnUrl,
    notification_url: input.notificationUrl,
    additional_data: input.additionalData,
    receipt_text: input.receiptText,
    avs_cvc_verification: input.avsCvcVerification,
    settings: input.settings,
    language: input.language,
    dynamic_billing_descriptor: input.dynamicBillingDescriptor,
    billing_anchor: p.schedule?.anchor ?? p.now,
    billing_day: p.schedule?.anchorDay ?? localDayOfMonth(p.now, ctx.shop.timeZone),
    time_zone: ctx.shop.timeZone,
    // A charge is claimed now: if this process dies before its answer is recorded, the billing
    // engine finds the subscription due after the lease and resolves the charge by query.
    renew_at: p.schedule?.charge
      ? new Date(p.now.getTime() + CHARGE_LEASE_MS)
      : (p.schedule?.renewAt ?? null),
    active_to: p.schedule?.activeTo ?? null,
    // A first charge due now announces the subscription with its outcome (transitions.ts).
    announced: !p.schedule?.charge,
  };
}

/**
 * With the gateway in this process, a card subscription whose first charge is due now is created in
 * one batch: the card, a new plan and customer, the subscription with its charge's outcome, the
 * charge's record and the payment itself commit together or not at all, in one round trip. No
 * subscription can then wait on a charge its process never made, and no payment exists without its
 * subscription. Undefined when the path does not apply (a remote gateway, a free trial, a payment the
 * gateway cannot plan, or one it refuses): the caller then claims, charges and records step by step.
 */
async function createWithPlannedCharge(
  ctx: Ctx,
  input: SubscriptionInput,
  card: CardInput,
): Promise<Subscription | undefined> {
  if (ctx.config.gatewayRemote) return undefined;
  const now = ctx.clock.now();
  const planData: PlanData | undefined = 'create' in input.plan ? input.plan.create : undefined;
  const newPlan = planData && newPlanRow(ctx.shop.id, newId('pln'), planData, now);
  const plan = 'existing' in input.plan ? input.plan.existing : toPlan(newPlan as PlanRow);
  const schedule = firstSchedule(plan, now, ctx.shop.timeZone, ctx.shop.threeDs);
  const charge = schedule.charge;
  // A card verification is an authorization, which the batch does not plan.
  if (!charge || isCardVerification(plan, charge.period)) return undefined;
  const existingCustomer =
    input.customer && 'existing' in input.customer ? input.customer.existing : undefined;
  const newCustomer =
    input.customer && 'create' in input.customer ? { id: newId('cst'), ...input.customer.create } : undefined;
  const sub = newSubscription(ctx, input, {
    id: newId('sbs'),
    planId: plan.id,
    customerId: existingCustomer?.id ?? newCustomer?.id ?? null,
    card: undefined,
    schedule,
    now,
  });

  // A refused request is answered by the step-by-step path, which records the refusal as it should.
  // Decided at the instant the subscription's change is stamped with (clock.ts: fixedClock).
  const request = firstChargeRequest(sub, plan, charge, cardRequest(card));
  const planned = await planCharge({ ...ctx, clock: fixedClock(now) }, request);
  if (!planned) return undefined;

  sub.card_token = planned.card.token;
  sub.card = planned.card;
  const created = newSubscriptionRow(sub, now);
  // As the step-by-step path would record the answer: a timeout leaves the outcome unknown.
  const recheckAt = new Date(now.getTime() + CHARGE_LEASE_MS);
  const t = transition(
    created,
    plan,
    plannedEventOf(planned, charge.period, recheckAt),
    now,
    rulesFor(ctx.shop),
  );
  // Every row written here is known in full beforehand, so nothing is read back.
  const row = changedRow(created, t, now);
  const customer = newCustomer ? newCustomerRow(ctx.shop.id, newCustomer, now) : existingCustomer;
  const view = await viewOf(ctx, row, { plan, customer });
  const statements: Statement[] = [...planned.statements];
  if (newPlan && planData) statements.push(planInsert(ctx.shop.id, newPlan.id, planData, now, false));
  if (newCustomer) statements.push(customerInsert(ctx.shop.id, newCustomer, now, false));
  statements.push(
    insertStatement(row),
    answeredChargeInsert(
      {
        shopId: ctx.shop.id,
        subscriptionId: sub.id,
        period: charge.period,
        amount: charge.amount,
        currency: plan.currency,
      },
      t.chargeStatus ?? 'pending',
      planned.answer.uid,
      now,
    ),
  );
  // t.events opens with created.subscription: the charge's outcome announces the subscription.
  const announced = subscriptionEventsInsert(t.events, view, ctx.shop.id, now);
  if (announced) statements.push(announced);
  // A keyed request's work is done with this batch: a retry after a crash answers from it.
  if (ctx.keyed) {
    statements.push(ctx.keyed.advance('finished', { subscription: sub.id }));
    await ctx.db.batch(statements);
  } else {
    // New rows only, written with the creates of other requests of the moment (db/grouped.ts); the
    // subscription's row tells, should the group's commit be lost with its connection, whether it
    // committed.
    await writeGrouped(ctx.db, statements, {
      sql: 'SELECT 1 FROM subscriptions WHERE shop_id = $1 AND id = $2',
      params: [ctx.shop.id, view.id],
    });
  }
  planned.recorded();
  return view;
}

/**
 * Creates a subscription. With a card: the card is tokenized, the subscription stored, and its first
 * charge taken (unless a free trial defers it). Without one: the subscription waits in `redirecting`
 * for the customer on the hosted payment page.
 */
export async function createSubscription(ctx: Ctx, body: Record<string, unknown>): Promise<Subscription> {
  const resumed = await resumeKeyed(ctx, body);
  if (resumed) return resumed;
  const input = await checkSubscriptionInput(ctx, body, ctx.db);
  if (input.card) {
    const created = await createWithPlannedCharge(ctx, input, input.card);
    if (created) return created;
  }
  const card = input.card ? await tokenizeCard(ctx, input.card) : undefined;
  const now = ctx.clock.now();

  const { row, plan, customer, charge } = await ctx.db.tx(async (tx) => {
    const plan = 'existing' in input.plan ? input.plan.existing : await savePlan(ctx, input.plan.create, tx);
    let customer: CustomerRow | undefined;
    if (input.customer && 'existing' in input.customer) customer = input.customer.existing;
    else if (input.customer) {
      customer = await insertCustomer(tx, ctx.shop.id, { id: newId('cst'), ...input.customer.create }, now);
    }
    const schedule = card ? firstSchedule(plan, now, ctx.shop.timeZone, ctx.shop.threeDs) : undefined;
    const sub = await insertSubscription(
      tx,
      newSubscription(ctx, input, {
        id: newId('sbs'),
        planId: plan.id,
        customerId: customer?.id ?? null,
        card,
        schedule,
        now,
      }),
      now,
    );
    const checkout = card ? undefined : await openCheckout(tx, ctx.shop.id, sub.id, now);
    const charge = schedule?.charge ?? null;
    if (charge) {
      const claim = { shopId: ctx.shop.id, subscriptionId: sub.id, period: charge.period, attempt: 1 };
      await claimCharge(tx, { ...claim, amount: charge.amount, currency: plan.currency }, now);
    }
    // A keyed request's recovery point commits with the subscription: a retry after a crash resumes
    // the claimed charge (resumeKeyed), or answers with the subscription when nothing is to charge.
    if (ctx.keyed) {
      await tx.query(
        charge
          ? ctx.keyed.advance('charge_claimed', { subscription: sub.id, period: charge.period, attempt: 1 })
          : ctx.keyed.advance('finished', { subscription: sub.id }),
      );
    }
    const view = toSubscription({
      row: sub,
      plan,
      customer,
      checkout: checkout && {
        url: checkoutUrl(ctx.config.checkoutUrl, checkout.token),
        token: checkout.token,
      },
    });
    // Announced now unless a charge is claimed: then its record announces it, with its outcome.
    const events = !sub.announced ? [] : sub.state === 'trial' ? CREATED_IN_TRIAL : CREATED;
    const announced = subscriptionEventsInsert(events, view, ctx.shop.id, now);
    if (announced) await tx.query(announced);
    return { row: sub, plan, customer, charge };
  });

  if (!charge || !card) return viewOf(ctx, row, { plan, customer });
  const charged = await takeFirstCharge(ctx, row, plan, charge, input.card?.cvc);
  return viewOf(ctx, charged, { plan, customer });
}

/**
 * A keyed create retried after its first run stopped (a crash, a lost connection) resumes where that
 * run stopped instead of creating a second subscription: with the charge claimed, the charge is
 * resumed (the gateway is asked before anything is sent again, and a resend carries the attempt's
 * key); with the work finished, the answer is the subscription as it is. Undefined for a first run.
 */
async function resumeKeyed(ctx: Ctx, body: Record<string, unknown>): Promise<Subscription | undefined> {
  const keyed = ctx.keyed;
  if (!keyed || keyed.point === 'started') return undefined;
  const id = keyed.resource?.subscription;
  const row = typeof id === 'string' ? await findSubscription(ctx.db, ctx.shop.id, id) : undefined;
  // Recorded with the subscription in one commit, so never without it.
  if (!row) throw ApiError.base('conflict', 'The request with this Idempotency-Key cannot be resumed');
  if (keyed.point !== 'charge_claimed') return viewOf(ctx, row);
  const period = Number(keyed.resource?.period);
  const attempt = Number(keyed.resource?.attempt);
  // Settled meanwhile (a read, billing): the subscription is the answer.
  const open = await openCharge(ctx.db, row.id);
  if (!open || open.period !== period || open.attempt !== attempt) return viewOf(ctx, row);
  const plan = await findPlanOfShop(ctx, row.plan_id);
  if (!plan) return viewOf(ctx, row);
  const charge = { period, amount: open.amount };
  const resumed = await takeFirstCharge(ctx, row, plan, charge, cvcOf(body), undefined, true);
  return viewOf(ctx, resumed);
}

/** The CVC of the retried body (the same body as the first run's: the key's fingerprint says so). */
function cvcOf(body: Record<string, unknown>): string | undefined {
  const card = body.card;
  if (!card || typeof card !== 'object') return undefined;
  const cvc = (card as Record<string, unknown>).verification_value;
  return typeof cvc === 'string' || typeof cvc === 'number' ? String(cvc) : undefined;
}

/**
 * Cancels on the shop's request; a subscription already ended is a clear 422, not a second cancel.
 * A cancel ends the open charge (decisions.md): an attempt still open when the cancel commits is
 * ended at the gateway afterwards (a 3-D Secure page open for it can no longer complete it), and
 * money it takes after all is refunded at once (charging: endAttempt, recordAttempt).
 *
 * No transaction is open across a gateway call, also for a keyed request (the route is phased): the
 * cancel's commit records the key's point 'finished', and a retry after a crash answers with the
 * subscription as it is.
 */
export async function cancelSubscription(
  ctx: Ctx,
  id: string,
  body: Record<string, unknown>,
): Promise<Subscription> {
  const errors = new ErrorCollector();
  checkBody(CancelInput, body, errors);
  errors.throwIfAny();
  const reason = body.cancel_reason as string;
  const current = await findSubscription(ctx.db, ctx.shop.id, id);
  if (ctx.keyed && ctx.keyed.point !== 'started') {
    // The first run of this key committed its cancel: the answer is the subscription as it is.
    if (!current) throw ApiError.notFound();
    return viewOf(ctx, current);
  }
  // A charge still open may have been made already (its billing process died before recording it):
  // it is settled first, as a read would: money taken before the cancel pays for its period. A
  // gateway that cannot answer now leaves the charge open, to be ended below: it never stops a cancel.
  if (current && !current.cancelled_at) {
    await settleOpenCharge(ctx, current).catch((err: unknown) => {
      ctx.log.warn({ err, subscription: id }, 'could not settle the open charge before cancelling');
    });
  }
  const { row, ended } = await ctx.db.tx(async (tx) => {
    const sub = await lockSubscription(tx, ctx.shop.id, id);
    if (!sub) throw ApiError.notFound();
    if (sub.cancelled_at) {
      throw ApiError.validation({
        base: [
          `Subscription is already ${sub.state === 'canceled' ? 'canceled' : `${sub.state} and cancelled`}`,
        ],
      });
    }
    const now = changeInstant(sub, ctx.clock.now());
    // The hosted page of a redirect subscription must not take money for a cancelled one.
    await closeCheckoutsOf(tx, id, now);
    const plan = await findPlanOfShop(ctx, sub.plan_id, tx);
    const t = transition(sub, plan, { kind: 'canceled', reason }, now, rulesFor(ctx.shop));
    const cancelled = await applyTransition(tx, sub, plan, t, now);
    const open = await endOpenAttempts(tx, id);
    if (ctx.keyed) await tx.query(ctx.keyed.advance('finished', { subscription: id }));
    return { row: cancelled, ended: open };
  });
  let after = row;
  for (const attempt of ended) {
    const settled = await endAttempt(ctx, subscriptionSubject(ctx, id), attempt);
    if (settled) after = settled;
  }
  return viewOf(ctx, after);
}
