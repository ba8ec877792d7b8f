import type { CustomerRow } from '../customers/repository.js';
import type { Queryable, Statement, Tx } from '../db/db.js';
import { eventInsert } from '../notifications/outbox.js';
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
export function subscriptionEventInsert(
  event: SubscriptionEvent | 'created.subscription',
  view: Subscription,
  shopId: number,
  now: Date,
): Statement {
  return eventInsert({
    shopId,
    resourceType: 'subscription',
    resourceId: view.id,
    event,
    payload: { ...view, event },
    url: view.notification_url,
    now,
  });
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
    await tx.query(s.sql, s.params);
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
