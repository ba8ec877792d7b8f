import type { Queryable, Tx } from '../db/db.js';
import { type EventRow, type NotificationStatus, RECORD_INTERRUPTED } from './queue.js';

/**
 * What the API reads and changes of a shop's notifications: the events that had a URL to go to
 * (those with a delivery), newest first, and their attempts.
 */

/**
 * An event with its delivery's state, as EventRow has them: status `none` and no attempts for an
 * event without a URL. Read FROM `EVENTS_WITH_DELIVERY`, whose aliases are `e` and `d`.
 */
export const EVENT_WITH_DELIVERY_COLUMNS = `e.id, e.shop_id, e.resource_type, e.resource_id, e.event,
  e.payload, e.created_at, e.url, coalesce(d.status, 'none') AS status, coalesce(d.attempts, 0) AS attempts,
  d.next_attempt_at, d.delivered_at, d.leased_until, coalesce(d.series_from, 0) AS series_from`;
export const EVENTS_WITH_DELIVERY = 'events e LEFT JOIN deliveries d ON d.event_id = e.id';
type DeliveryColumn =
  | 'status'
  | 'attempts'
  | 'next_attempt_at'
  | 'delivered_at'
  | 'leased_until'
  | 'series_from';
const NOTIFICATIONS = `SELECT ${EVENT_WITH_DELIVERY_COLUMNS} FROM events e JOIN deliveries d ON d.event_id = e.id`;

export interface NotificationFilter {
  resourceId?: string;
  event?: string;
  status?: NotificationStatus;
}

/** One page, newest first, limit + 1 rows (see `page`); `before` is the id of the last row shown. */
export function listEvents(
  db: Queryable,
  shopId: number,
  f: NotificationFilter,
  limit: number,
  before: number | undefined,
): Promise<EventRow[]> {
  const params: unknown[] = [shopId, limit + 1];
  // With a status, the deliveries' index by shop and status gives the order; without, the events'
  // index of the shop's notifications (events_shop_notified), or its index by event.
  const where = f.status === undefined ? ['e.shop_id = $1', 'e.url IS NOT NULL'] : ['d.shop_id = $1'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(`${sql} $${params.length}`);
  };
  if (f.resourceId !== undefined) add('e.resource_id =', f.resourceId);
  if (f.event !== undefined) add('e.event =', f.event);
  if (f.status !== undefined) add('d.status =', f.status);
  if (before !== undefined) add(f.status === undefined ? 'e.id <' : 'd.event_id <', before);
  const order = f.status === undefined ? 'e.id' : 'd.event_id';
  return db.query<EventRow>(
    `${NOTIFICATIONS} WHERE ${where.join(' AND ')} ORDER BY ${order} DESC LIMIT $2`,
    params,
  );
}

export async function findEvent(db: Queryable, shopId: number, id: number): Promise<EventRow | undefined> {
  const [row] = await db.query<EventRow>(`${NOTIFICATIONS} WHERE e.shop_id = $1 AND e.id = $2`, [shopId, id]);
  return row;
}

export interface AttemptRow {
  event_id: number;
  n: number;
  at: Date;
  status_code: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
  /** The Kopek-Signature header sent; null for attempts that sent none or were made before it was kept. */
  kopek_signature: string | null;
}

export function attemptsOf(db: Queryable, eventId: number): Promise<AttemptRow[]> {
  return db.query<AttemptRow>('SELECT * FROM event_attempts WHERE event_id = $1 ORDER BY n', [eventId]);
}

/**
 * Sends the notification again: a new series of attempts, due now on the shop's clock. One on its
 * way right now (leased) is left as it is. Undefined when the shop has no such notification.
 */
export async function resendEvent(
  tx: Tx,
  shopId: number,
  id: number,
  realNow: Date,
  shopNow: Date,
  leaseMs: number,
): Promise<EventRow | undefined> {
  const [row] = await tx.query<EventRow>(
    `${NOTIFICATIONS} WHERE e.shop_id = $1 AND e.id = $2 FOR UPDATE OF d`,
    [shopId, id],
  );
  if (!row || (row.leased_until !== null && row.leased_until > realNow)) return row;
  await tx.query(RECORD_INTERRUPTED, [[id], leaseMs, shopId]);
  const [delivery] = await tx.query<Pick<EventRow, DeliveryColumn>>({
    sql: `UPDATE deliveries SET status = 'pending', series_from = attempts, next_attempt_at = $2, leased_until = NULL
     WHERE event_id = $1 AND shop_id = $3
     RETURNING status, attempts, next_attempt_at, delivered_at, leased_until, series_from`,
    params: [id, shopNow, shopId],
    wakes: true,
  });
  return { ...row, ...delivery };
}

export interface Backlog {
  pending: number;
  /** Seconds the oldest undelivered notification has waited since its event, on its shop's clock. */
  oldestSeconds: number;
}

export async function pendingBacklog(db: Queryable, now: Date): Promise<Backlog> {
  const [row] = await db.query<{ pending: number; oldest: number | null }>(
    `SELECT count(*)::int AS pending,
       max(extract(epoch FROM $1::timestamptz + sh.clock_offset_ms * interval '1 millisecond' - e.created_at))::float8 AS oldest
     FROM deliveries d JOIN events e ON e.id = d.event_id AND e.shop_id = d.shop_id JOIN shops sh ON sh.id = d.shop_id
     WHERE d.status = 'pending'`,
    [now],
  );
  return { pending: row?.pending ?? 0, oldestSeconds: Math.max(0, row?.oldest ?? 0) };
}
