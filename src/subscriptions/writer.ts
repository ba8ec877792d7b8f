import type { CustomerRow } from '../customers/repository.js';
import type { Queryable, Statement, Tx } from '../db/db.js';
import { type Announcement, eventInsert, eventsInsert } from '../notifications/outbox.js';
import type { Plan } from '../plans/service.js';
import { recordCharge } from './charge-records.js';
import { type SubscriptionRow, updateSubscription, withChange } from './repository.js';
import type { SubscriptionEvent, Transition } from './transitions.js';
import { type Subscription, toSubscription } from './view.js';

/**
 * The one writer of a subscription's state: applies what `transition` decided, inside the caller's
 * transaction, together with the charge attempt's record and the events it announces. Nothing else
 * writes a subscription's state, counters or schedule.
 */

export interface ChargeRef {
  period: number;
  attempt: number;
  uid: string | null;
}

/** An event of the outbox announcing the subscription as the API shows it, for its notification_url. */
function subscriptionAnnouncement(
  event: SubscriptionEvent | 'created.subscription',
  view: Subscription,
  shopId: number,
  now: Date,
): Announcement {
  return {
    shopId,
    resourceType: 'subscription',
    resourceId: view.id,
    event,
    payload: { ...view, event },
    url: view.notification_url,
    now,
  };
}

export function subscriptionEventInsert(
  event: SubscriptionEvent | 'created.subscription',
  view: Subscription,
  shopId: number,
  now: Date,
): Statement {
  return eventInsert(subscriptionAnnouncement(event, view, shopId, now));
}

async function customerOf(db: Queryable, row: SubscriptionRow): Promise<CustomerRow | undefined> {
  if (!row.customer_id) return undefined;
  const [c] = await db.query<CustomerRow>('SELECT * FROM customers WHERE shop_id = $1 AND id = $2', [
    row.shop_id,
    row.customer_id,
  ]);
  return c;
}

/** Writes the events of `t` for the subscription as it now is. */
export async function writeEvents(
  tx: Queryable,
  row: SubscriptionRow,
  plan: Plan | undefined,
  events: readonly (SubscriptionEvent | 'created.subscription')[],
  now: Date,
  customer?: CustomerRow,
): Promise<void> {
  if (events.length === 0) return;
  const view = toSubscription({
    row,
    plan,
    customer: customer ?? (await customerOf(tx, row)),
    checkout: undefined,
  });
  for (const event of events) {
    const s = subscriptionEventInsert(event, view, row.shop_id, now);
    await tx.query(s);
  }
}

/**
 * Applies `t` to the locked row `sub`: the subscription's change, the charge attempt's status (when
 * `charge` names one) and the events. Returns the row as it now is.
 */
export async function applyTransition(
  tx: Tx,
  sub: SubscriptionRow,
  plan: Plan | undefined,
  t: Transition,
  now: Date,
  charge?: ChargeRef,
): Promise<SubscriptionRow> {
  if (charge && t.chargeStatus) {
    await recordCharge(tx, sub.id, charge.period, charge.attempt, t.chargeStatus, charge.uid, now);
  }
  const row = Object.keys(t.change).length > 0 ? await updateSubscription(tx, sub.id, t.change, now) : sub;
  await writeEvents(tx, row, plan, t.events, now);
  return row;
}

/** The row `sub` becomes under `t`, for a caller that writes it itself (a new subscription's batch). */
export function changedRow(sub: SubscriptionRow, t: Transition, now: Date): SubscriptionRow {
  return withChange(sub, t.change, sub.created_at, now);
}

export interface Applied {
  sub: SubscriptionRow;
  plan: Plan | undefined;
  t: Transition;
  charge?: ChargeRef | undefined;
  /** The instant on the subscription's shop's clock (a test shop's may run ahead). */
  at: Date;
}

const UPDATE_MANY = `UPDATE subscriptions s SET state = v.state, renew_at = v.renew_at, active_to = v.active_to,
    paid_billing_cycles = v.paid, number_failed_payment_attempts = v.failed,
    last_transaction = v.last_transaction, cancel_reason = v.cancel_reason,
    cancelled_at = v.cancelled_at, updated_at = v.updated_at
  FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::int[], $6::int[],
    $7::jsonb[], $8::text[], $9::timestamptz[], $10::timestamptz[])
    AS v (id, state, renew_at, active_to, paid, failed, last_transaction, cancel_reason, cancelled_at, updated_at)
  WHERE s.id = v.id`;

const RECORD_MANY = `UPDATE subscription_charges c SET status = v.status,
    transaction_uid = COALESCE(v.uid, c.transaction_uid), updated_at = v.at
  FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::uuid[], $6::timestamptz[])
    AS v (id, period, attempt, status, uid, at)
  WHERE c.subscription_id = v.id AND c.period = v.period AND c.attempt = v.attempt`;

/**
 * `applyTransition` for many locked subscriptions at once, as at most three statements for the
 * caller's batch (charge records, subscription rows, events), so the billing engine records a whole
 * batch in one round trip. Each row is written in full as `withChange` makes it; `customers` gives
 * the events' payloads their customer. Returns the statements and the rows as they now are.
 */
export function transitionsStatements(
  items: readonly Applied[],
  customers: ReadonlyMap<string, CustomerRow>,
): { statements: Statement[]; rows: SubscriptionRow[] } {
  const charges: unknown[][] = [[], [], [], [], [], []];
  const subs: unknown[][] = [[], [], [], [], [], [], [], [], [], []];
  const events: Announcement[] = [];
  const rows: SubscriptionRow[] = [];
  for (const { sub, plan, t, charge, at } of items) {
    if (charge && t.chargeStatus) {
      const values = [sub.id, charge.period, charge.attempt, t.chargeStatus, charge.uid, at];
      for (const [i, v] of values.entries()) charges[i]?.push(v);
    }
    const row = Object.keys(t.change).length > 0 ? withChange(sub, t.change, sub.created_at, at) : sub;
    rows.push(row);
    if (row !== sub) {
      const values = [
        row.id,
        row.state,
        row.renew_at,
        row.active_to,
        row.paid_billing_cycles,
        row.number_failed_payment_attempts,
        row.last_transaction === null ? null : JSON.stringify(row.last_transaction),
        row.cancel_reason,
        row.cancelled_at,
        at,
      ];
      for (const [i, v] of values.entries()) subs[i]?.push(v);
    }
    if (t.events.length > 0) {
      const customer = row.customer_id ? customers.get(row.customer_id) : undefined;
      const view = toSubscription({ row, plan, customer, checkout: undefined });
      for (const event of t.events) events.push(subscriptionAnnouncement(event, view, row.shop_id, at));
    }
  }
  const statements: Statement[] = [];
  if ((charges[0] as unknown[]).length > 0) statements.push({ sql: RECORD_MANY, params: charges });
  if ((subs[0] as unknown[]).length > 0) statements.push({ sql: UPDATE_MANY, params: subs });
  if (events.length > 0) statements.push(eventsInsert(events));
  return { statements, rows };
}
