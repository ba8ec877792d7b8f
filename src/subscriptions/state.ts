import { chargesRecord } from '../charging/index.js';
import type { CustomerRow } from '../customers/index.js';
import type { Queryable, Statement, Tx } from '../db/db.js';
import { shaped, valuesShape } from '../db/rows.js';
import { type Announcement, eventsInsert } from '../notifications/index.js';
import type { Plan } from '../plans/index.js';
import type { NewSubscription, SubscriptionChange, SubscriptionRow } from './repository.js';
import type { SubscriptionEvent, Transition } from './transitions.js';
import { type Subscription, toSubscription } from './view.js';

/**
 * The one writer of the subscriptions table: the only file with an INSERT or UPDATE of it
 * (test/architecture/writers.test.ts keeps it so). A new row is inserted whole; after that a row
 * changes only as `transition` decides, applied here to a row its caller holds locked (SELECT … FOR
 * UPDATE), written back whole with the charge attempt's record and the events it announces.
 *
 * Rows are written in full, never column by column: one statement text for any change keeps
 * prepared statements few and lets one statement write a whole batch. A full row is safe to write
 * only because it was read under the lock it is written under, so no change made meanwhile is lost.
 */

const jsonOrNull = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** Every column of a subscription, in the order insertStatement binds them. */
const ROW_COLUMNS = [
  'id',
  'shop_id',
  'plan_id',
  'customer_id',
  'card_token',
  'card',
  'state',
  'tracking_id',
  'device_id',
  'return_url',
  'notification_url',
  'additional_data',
  'receipt_text',
  'avs_cvc_verification',
  'settings',
  'language',
  'dynamic_billing_descriptor',
  'billing_anchor',
  'billing_day',
  'time_zone',
  'renew_at',
  'active_to',
  'paid_billing_cycles',
  'number_failed_payment_attempts',
  'last_transaction',
  'cancel_reason',
  'cancelled_at',
  'announced',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SubscriptionRow)[];

/** A new subscription's row, ROW_COLUMNS. */
const SUBSCRIPTION_ROWS = valuesShape(
  'subscriptions',
  `INSERT INTO subscriptions (${ROW_COLUMNS.join(', ')})`,
  ROW_COLUMNS.length,
);
const INSERT_RETURNING_SQL = `${SUBSCRIPTION_ROWS.around(SUBSCRIPTION_ROWS.tuple(1, 0))} RETURNING *`;

/**
 * The INSERT of a new subscription, to run alone or in a batch; nothing read back unless asked
 * (`returning`). The row is complete: it may carry the outcome of its first charge already (state,
 * counters, last_transaction). One text for every subscription, read column by column (no keys
 * enumerated).
 */
export function insertStatement(r: SubscriptionRow, returning = false): Statement {
  const params = [
    r.id,
    r.shop_id,
    r.plan_id,
    r.customer_id,
    r.card_token,
    jsonOrNull(r.card),
    r.state,
    r.tracking_id,
    r.device_id,
    r.return_url,
    r.notification_url,
    jsonOrNull(r.additional_data),
    jsonOrNull(r.receipt_text),
    jsonOrNull(r.avs_cvc_verification),
    jsonOrNull(r.settings),
    r.language,
    r.dynamic_billing_descriptor,
    r.billing_anchor,
    r.billing_day,
    r.time_zone,
    r.renew_at,
    r.active_to,
    r.paid_billing_cycles,
    r.number_failed_payment_attempts,
    jsonOrNull(r.last_transaction),
    r.cancel_reason,
    r.cancelled_at,
    r.announced,
    r.created_at,
    r.updated_at,
  ];
  return returning ? { sql: INSERT_RETURNING_SQL, params } : shaped(SUBSCRIPTION_ROWS, params);
}

/** Inserts a new subscription before any charge changed it; resolves with the row as stored. */
export async function insertSubscription(
  db: Queryable,
  s: NewSubscription,
  now: Date,
): Promise<SubscriptionRow> {
  const [row] = await db.query<SubscriptionRow>(insertStatement(newSubscriptionRow(s, now), true));
  return row as SubscriptionRow;
}

/** The row a new subscription becomes once inserted, before any charge changed it. */
export function newSubscriptionRow(s: NewSubscription, now: Date): SubscriptionRow {
  return withChange(s, {}, now, now);
}

/**
 * `r` with `change` applied, every column named: rows built field by field keep one shape, which
 * keeps the hot path of creating a subscription free of the engine's slow object paths.
 */
export function withChange(
  r: NewSubscription & Partial<SubscriptionRow>,
  change: SubscriptionChange,
  createdAt: Date,
  updatedAt: Date,
): SubscriptionRow {
  return {
    id: r.id,
    shop_id: r.shop_id,
    plan_id: r.plan_id,
    customer_id: change.customer_id !== undefined ? change.customer_id : r.customer_id,
    card_token: change.card_token !== undefined ? change.card_token : r.card_token,
    card: change.card !== undefined ? change.card : r.card,
    state: change.state ?? r.state,
    tracking_id: r.tracking_id,
    device_id: r.device_id,
    return_url: r.return_url,
    notification_url: r.notification_url,
    additional_data: r.additional_data,
    receipt_text: r.receipt_text,
    avs_cvc_verification: r.avs_cvc_verification,
    settings: r.settings,
    language: r.language,
    dynamic_billing_descriptor: r.dynamic_billing_descriptor,
    billing_anchor: change.billing_anchor ?? r.billing_anchor,
    billing_day: change.billing_day ?? r.billing_day,
    time_zone: r.time_zone,
    renew_at: change.renew_at !== undefined ? change.renew_at : r.renew_at,
    active_to: change.active_to !== undefined ? change.active_to : r.active_to,
    paid_billing_cycles: change.paid_billing_cycles ?? r.paid_billing_cycles ?? 0,
    number_failed_payment_attempts:
      change.number_failed_payment_attempts ?? r.number_failed_payment_attempts ?? 0,
    last_transaction:
      change.last_transaction !== undefined ? change.last_transaction : (r.last_transaction ?? null),
    cancel_reason: change.cancel_reason !== undefined ? change.cancel_reason : (r.cancel_reason ?? null),
    cancelled_at: change.cancelled_at !== undefined ? change.cancelled_at : (r.cancelled_at ?? null),
    announced: change.announced ?? r.announced ?? true,
    created_at: createdAt,
    updated_at: updatedAt,
  };
}

/**
 * The UPDATE of whole rows: every column a transition may change (SubscriptionChange) is set from
 * the row given, in one statement for one row or a batch. Each row must be one its caller read
 * under a lock it still holds, changed in memory by `withChange`.
 */
const UPDATE_MANY = `UPDATE subscriptions s SET customer_id = v.customer_id, card_token = v.card_token,
    card = v.card, state = v.state, billing_anchor = v.billing_anchor, billing_day = v.billing_day,
    renew_at = v.renew_at, active_to = v.active_to, paid_billing_cycles = v.paid,
    number_failed_payment_attempts = v.failed, last_transaction = v.last_transaction,
    cancel_reason = v.cancel_reason, cancelled_at = v.cancelled_at, updated_at = v.updated_at,
    announced = v.announced
  FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::timestamptz[],
    $7::smallint[], $8::timestamptz[], $9::timestamptz[], $10::int[], $11::int[], $12::jsonb[],
    $13::text[], $14::timestamptz[], $15::timestamptz[], $16::boolean[])
    AS v (id, customer_id, card_token, card, state, billing_anchor, billing_day, renew_at, active_to,
      paid, failed, last_transaction, cancel_reason, cancelled_at, updated_at, announced)
  WHERE s.id = v.id`;

/** Writes `rows` back whole (see UPDATE_MANY): one statement, whatever changed in each. */
export function updateStatement(rows: readonly SubscriptionRow[]): Statement {
  const columns: unknown[][] = Array.from({ length: 16 }, () => []);
  for (const r of rows) {
    const values = [
      r.id,
      r.customer_id,
      r.card_token,
      jsonOrNull(r.card),
      r.state,
      r.billing_anchor,
      r.billing_day,
      r.renew_at,
      r.active_to,
      r.paid_billing_cycles,
      r.number_failed_payment_attempts,
      jsonOrNull(r.last_transaction),
      r.cancel_reason,
      r.cancelled_at,
      r.updated_at,
      r.announced !== false,
    ];
    for (let i = 0; i < values.length; i++) (columns[i] as unknown[]).push(values[i]);
  }
  return { sql: UPDATE_MANY, params: columns };
}

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

/**
 * The statement announcing the subscription's `events`, in order: one statement however many there
 * are (a first charge announces the subscription with its outcome), none when there are none.
 */
export function subscriptionEventsInsert(
  events: readonly (SubscriptionEvent | 'created.subscription')[],
  view: Subscription,
  shopId: number,
  now: Date,
): Statement | undefined {
  const announcements = events.map((event) => subscriptionAnnouncement(event, view, shopId, now));
  return announcements.length > 0 ? eventsInsert(announcements) : undefined;
}

async function customerOf(db: Queryable, row: SubscriptionRow): Promise<CustomerRow | undefined> {
  if (!row.customer_id) return undefined;
  const [c] = await db.query<CustomerRow>('SELECT * FROM customers WHERE shop_id = $1 AND id = $2', [
    row.shop_id,
    row.customer_id,
  ]);
  return c;
}

/**
 * Applies `t` to the locked row `sub`: the subscription's change, the charge attempt's status (when
 * `charge` names one) and the events, in one batch. Returns the row as it now is (built in memory,
 * as written: nothing is read back).
 */
/**
 * The instant a change of the locked `sub` is stamped with: `now`, or the subscription's last change
 * when that is later. Instances read their clocks apart (another host's clock, a test shop's offset
 * read before another instance advanced it), and a subscription's history never goes back: a
 * cancellation that waited for a renewal's lock is stamped no earlier than the renewal it follows.
 */
export function changeInstant(sub: Pick<SubscriptionRow, 'updated_at'>, now: Date): Date {
  return sub.updated_at.getTime() > now.getTime() ? new Date(sub.updated_at.getTime()) : now;
}

export async function applyTransition(
  tx: Tx,
  sub: SubscriptionRow,
  plan: Plan | undefined,
  t: Transition,
  now: Date,
  charge?: ChargeRef,
): Promise<SubscriptionRow> {
  const items: Applied[] = [{ sub, plan, t, charge, at: now }];
  const customer =
    t.events.length > 0 ? await customerOf(tx, withChange(sub, t.change, sub.created_at, now)) : undefined;
  const { statements, rows } = transitionsStatements(
    items,
    new Map(customer ? [[customer.id, customer]] : []),
  );
  if (statements.length > 0) await tx.batch(statements);
  return rows[0] as SubscriptionRow;
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
  const answers = [];
  const changed: SubscriptionRow[] = [];
  const events: Announcement[] = [];
  const rows: SubscriptionRow[] = [];
  for (const { sub, plan, t, charge, at } of items) {
    if (charge && t.chargeStatus) {
      answers.push({
        subscriptionId: sub.id,
        period: charge.period,
        attempt: charge.attempt,
        status: t.chargeStatus,
        uid: charge.uid,
        at,
      });
    }
    const row = Object.keys(t.change).length > 0 ? withChange(sub, t.change, sub.created_at, at) : sub;
    rows.push(row);
    if (row !== sub) changed.push(row);
    if (t.events.length > 0) {
      const customer = row.customer_id ? customers.get(row.customer_id) : undefined;
      const view = toSubscription({ row, plan, customer, checkout: undefined });
      for (const event of t.events) events.push(subscriptionAnnouncement(event, view, row.shop_id, at));
    }
  }
  const statements: Statement[] = [];
  if (answers.length > 0) statements.push(chargesRecord(answers));
  if (changed.length > 0) statements.push(updateStatement(changed));
  if (events.length > 0) statements.push(eventsInsert(events));
  return { statements, rows };
}
