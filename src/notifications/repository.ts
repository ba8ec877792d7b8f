import type { Queryable, Tx } from '../db/db.js';
import { type EventRow, type NotificationStatus, RECORD_INTERRUPTED } from './queue.js';

/**
 * What the API reads and changes of a shop's notifications: the events that had a URL to go to
 * (status other than `none`), newest first, and their attempts.
 */

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
  const where = ['shop_id = $1', "status <> 'none'"];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(`${sql} $${params.length}`);
  };
  if (f.resourceId !== undefined) add('resource_id =', f.resourceId);
  if (f.event !== undefined) add('event =', f.event);
  if (f.status !== undefined) add('status =', f.status);
  if (before !== undefined) add('id <', before);
  return db.query<EventRow>(
    `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $2`,
    params,
  );
}

export async function findEvent(db: Queryable, shopId: number, id: number): Promise<EventRow | undefined> {
  const [row] = await db.query<EventRow>(
    `SELECT * FROM events WHERE shop_id = $1 AND id = $2 AND status <> 'none'`,
    [shopId, id],
  );
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
    `SELECT * FROM events WHERE shop_id = $1 AND id = $2 AND status <> 'none' FOR UPDATE`,
    [shopId, id],
  );
  if (!row || (row.leased_until !== null && row.leased_until > realNow)) return row;
  await tx.query(RECORD_INTERRUPTED, [[id], leaseMs]);
  const [changed] = await tx.query<EventRow>(
    `UPDATE events SET status = 'pending', series_from = attempts, next_attempt_at = $2, leased_until = NULL
     WHERE id = $1 RETURNING *`,
    [id, shopNow],
  );
  return changed;
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
     FROM events e JOIN shops sh ON sh.id = e.shop_id WHERE e.status = 'pending'`,
    [now],
  );
  return { pending: row?.pending ?? 0, oldestSeconds: Math.max(0, row?.oldest ?? 0) };
}
