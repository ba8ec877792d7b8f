import type { Statement, Tx } from '../db/db.js';

/**
 * The deliverers' questions to the outbox. The events table is the queue: an event is due when its
 * next_attempt_at has passed on its shop's clock (real time plus a test shop's offset) and no
 * deliverer holds it; a resource's events go one at a time, oldest first.
 */

export type NotificationStatus = 'pending' | 'delivered' | 'failed';

export interface EventRow {
  id: number;
  shop_id: number;
  resource_type: string;
  resource_id: string;
  event: string;
  payload: Record<string, unknown>;
  created_at: Date;
  url: string | null;
  status: NotificationStatus | 'none';
  attempts: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  leased_until: Date | null;
  series_from: number;
}

/** A due event with what sending it needs from its shop. */
export interface DueRow extends EventRow {
  url: string;
  test: boolean;
  clock_offset_ms: number;
  private_key_enc: string;
  secret_enc: string | null;
}

const SHOP_NOW = `$1::timestamptz + sh.clock_offset_ms * interval '1 millisecond'`;

export interface ClaimFilter {
  limit: number;
  /** Shops whose deliveries in this process are at their limit. */
  busyShops: number[];
  shopId?: number | readonly number[] | undefined;
}

/**
 * Locks due events, oldest first, skipping those another deliverer is claiming and those whose
 * resource has an earlier event still waiting (so a `renewed` never overtakes its `created`).
 */
export function lockDue(tx: Tx, now: Date, f: ClaimFilter): Promise<DueRow[]> {
  const params: unknown[] = [now, f.limit, f.busyShops];
  let shop = '';
  if (f.shopId !== undefined) {
    params.push(typeof f.shopId === 'number' ? [f.shopId] : f.shopId);
    shop = 'AND e.shop_id = ANY($4::int[])';
  }
  return tx.query<DueRow>(
    `SELECT e.*, sh.test, sh.clock_offset_ms, sh.private_key_enc, sh.secret_enc
     FROM events e JOIN shops sh ON sh.id = e.shop_id
     WHERE e.status = 'pending' AND e.next_attempt_at <= ${SHOP_NOW}
       AND (e.leased_until IS NULL OR e.leased_until <= $1)
       AND e.shop_id <> ALL($3::int[]) ${shop}
       AND NOT EXISTS (SELECT 1 FROM events p
         WHERE p.status = 'pending' AND p.resource_id = e.resource_id AND p.id < e.id)
     ORDER BY e.next_attempt_at, e.id LIMIT $2
     FOR UPDATE OF e SKIP LOCKED`,
    params,
  );
}

/**
 * An attempt whose deliverer stopped before recording it (its lease ran out) is recorded as such,
 * so the list of attempts has no gap. A late answer from that deliverer replaces this row.
 */
export const RECORD_INTERRUPTED = `INSERT INTO event_attempts (event_id, n, at, duration_ms, error)
  SELECT id, attempts, next_attempt_at - $2 * interval '1 millisecond', 0,
    'no answer recorded: the process sending it stopped'
  FROM events WHERE id = ANY($1::bigint[]) AND leased_until IS NOT NULL AND attempts > 0
  ON CONFLICT DO NOTHING`;

/**
 * Leases the locked events `ids`: the attempt number is taken (attempts + 1), and no other
 * deliverer takes them until `leaseMs` have passed, on real time and on the shop's clock alike.
 */
export async function leaseEvents(tx: Tx, ids: number[], now: Date, leaseMs: number): Promise<void> {
  await tx.query(RECORD_INTERRUPTED, [ids, leaseMs]);
  await tx.query(
    `UPDATE events e SET attempts = e.attempts + 1,
       next_attempt_at = ${SHOP_NOW} + $3 * interval '1 millisecond',
       leased_until = $1::timestamptz + $3 * interval '1 millisecond'
     FROM shops sh WHERE sh.id = e.shop_id AND e.id = ANY($2::bigint[])`,
    [now, ids, leaseMs],
  );
}

export interface AttemptRecord {
  eventId: number;
  n: number;
  /** The series the attempt belonged to when claimed: a resend since then starts another. */
  seriesFrom: number;
  at: Date;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
}

/** What the attempt leads to: delivered, another attempt at `retryAt`, or failed for good. */
export type Next = { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'failed' };

const UPSERT_ATTEMPT = `INSERT INTO event_attempts (event_id, n, at, status_code, duration_ms, response, error)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT (event_id, n) DO UPDATE SET at = EXCLUDED.at, status_code = EXCLUDED.status_code,
    duration_ms = EXCLUDED.duration_ms, response = EXCLUDED.response, error = EXCLUDED.error`;

// A 2xx ends the notification whoever holds it now; any other outcome changes it only while this
// attempt's lease is still the latest, so a late deliverer never undoes a newer attempt's result.
const DELIVERED = `UPDATE events SET status = 'delivered', delivered_at = $3, next_attempt_at = NULL,
    leased_until = CASE WHEN attempts = $2 THEN NULL ELSE leased_until END
  WHERE id = $1 AND status = 'pending'`;
const RETRY = `UPDATE events SET next_attempt_at = $4, leased_until = NULL
  WHERE id = $1 AND attempts = $2 AND series_from = $3 AND status = 'pending'`;
const FAILED = `UPDATE events SET status = 'failed', next_attempt_at = NULL, leased_until = NULL
  WHERE id = $1 AND attempts = $2 AND series_from = $3 AND status = 'pending'`;

/** The attempt's record and the event's new state, as one transaction. */
export function outcomeStatements(a: AttemptRecord, next: Next): Statement[] {
  const attempt: Statement = {
    sql: UPSERT_ATTEMPT,
    params: [a.eventId, a.n, a.at, a.statusCode, a.durationMs, a.response, a.error],
  };
  if (next.kind === 'delivered') return [attempt, { sql: DELIVERED, params: [a.eventId, a.n, a.at] }];
  if (next.kind === 'retry')
    return [attempt, { sql: RETRY, params: [a.eventId, a.n, a.seriesFrom, next.at] }];
  return [attempt, { sql: FAILED, params: [a.eventId, a.n, a.seriesFrom] }];
}
