import type { NotificationAuth } from '../context.js';
import { INDEX_ORDER_PLAN } from '../db/claim-plan.js';
import { type Db, type Statement, sqlText } from '../db/db.js';

/**
 * The deliverers' questions to the outbox. The deliveries table is the queue, one narrow row per
 * event with a URL: a notification is due when its next_attempt_at has passed on its shop's clock
 * (real time plus a test shop's offset) and no deliverer holds it; a resource's notifications go one
 * at a time, oldest first. The event itself (its payload) is only read.
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

/**
 * A claimed event: what sending it needs, of the event and of its shop. Its `attempts` already
 * counts this attempt (the claim took its number). Only these columns are read back: the event's
 * timestamps, parsed into Dates for every claimed row, were a deliverer's work for nothing.
 */
export interface DueRow {
  id: number;
  shop_id: number;
  event: string;
  payload: Record<string, unknown>;
  url: string;
  attempts: number;
  series_from: number;
  test: boolean;
  clock_offset_ms: number;
  private_key_enc: string;
  secret_enc: string | null;
  notification_auth: NotificationAuth;
  webhook_secret_enc: string | null;
  webhook_secret_prev_enc: string | null;
  webhook_secret_prev_until: Date | null;
}

const SHOP_NOW = `$1::timestamptz + sh.clock_offset_ms * interval '1 millisecond'`;

/**
 * For the rest of the batch's transaction only. set_config rather than SET LOCAL: a batch is one
 * transaction without a BEGIN, where SET LOCAL works too but PostgreSQL logs a warning every time.
 * The plan PostgreSQL keeps for the prepared text, not one made anew for each claim: planning the
 * claim took as long as running it (about 0.45 ms), and the plans it made were all alike. And it is
 * a plan in index order (INDEX_ORDER_PLAN): a plan made while the statistics said `deliveries` was
 * nearly empty read one shop's backlog of 10,000 whole on every claim, and stayed until they changed.
 */
const GENERIC_PLAN = "SELECT set_config('plan_cache_mode', 'force_generic_plan', true)";

export interface ClaimFilter {
  /** Events to take at most. */
  limit: number;
  /** Deliveries each shop already has on their way in this process (shops with none may be left out). */
  held: ReadonlyMap<number, number>;
  /** How many deliveries on their way one shop may have. */
  perShop: number;
  shopId?: number | readonly number[] | undefined;
}

/**
 * An attempt whose deliverer stopped before recording it (its lease ran out) is recorded as such,
 * so the list of attempts has no gap. A late answer from that deliverer replaces this row.
 */
export const RECORD_INTERRUPTED = `INSERT INTO event_attempts (event_id, n, at, duration_ms, error, shop_id)
  SELECT event_id, attempts, next_attempt_at - $2 * interval '1 millisecond', 0,
    'no answer recorded: the process sending it stopped', shop_id
  FROM deliveries
  WHERE event_id = ANY($1::bigint[]) AND shop_id = $3 AND leased_until IS NOT NULL AND attempts > 0
  ON CONFLICT DO NOTHING`;

/**
 * Claims due events in one statement (one round trip, no transaction left open): locks them, oldest
 * first, skipping those another deliverer is claiming and those whose resource has an earlier event
 * still waiting (so a `renewed` never overtakes its `created`); keeps `limit` of them, no shop past
 * `perShop` with what it already holds (each shop's first few are taken from its own queue, so a
 * shop whose backlog holds its share of slots is never read through to reach the others); records
 * an earlier attempt whose deliverer stopped (see RECORD_INTERRUPTED); and leases them: the attempt number is taken (attempts + 1), and no other
 * deliverer takes them until `leaseMs` have passed, on real time and on the shop's clock alike.
 * All parts of the statement see the events as they were before it, as the separate statements did.
 */
export async function claimDue(
  db: Pick<Db, 'batch'>,
  now: Date,
  f: ClaimFilter,
  leaseMs: number,
): Promise<DueRow[]> {
  const [, , rows] = await db.batch<DueRow>(claimBatch(now, f, leaseMs));
  return rows ?? [];
}

/** What claimDue runs, as one transaction: the plan's settings, then the claim (the last statement). */
export function claimBatch(now: Date, f: ClaimFilter, leaseMs: number): Statement[] {
  return [{ sql: GENERIC_PLAN }, { sql: INDEX_ORDER_PLAN }, claimStatement(now, f, leaseMs)];
}

/** claimDue's statement (claimBatch runs it after the plan's settings, in the same transaction). */
function claimStatement(now: Date, f: ClaimFilter, leaseMs: number): Statement {
  const busy: number[] = [];
  const heldShops: number[] = [];
  const heldCounts: number[] = [];
  for (const [shop, n] of f.held) {
    if (n >= f.perShop) busy.push(shop);
    else if (n > 0) {
      heldShops.push(shop);
      heldCounts.push(n);
    }
  }
  const params: unknown[] = [now, busy, heldShops, heldCounts, f.perShop, f.limit, leaseMs];
  // The shops to look at: those given, or each shop with a notification pending, found by stepping
  // through an index of pending deliveries led by the shop, from one shop to the next (one index
  // descent per shop). Each shop's own due ones then come from deliveries_shop_due, in order, and
  // whether one is the oldest pending of its resource from deliveries_shop_resource_pending: a
  // subquery per row, which PostgreSQL cannot turn into a join that reads the shop's queue whole.
  let shops = `RECURSIVE shops_waiting (shop_id) AS (
         (SELECT d.shop_id FROM deliveries d WHERE d.status = 'pending' ORDER BY d.shop_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.shop_id FROM deliveries d WHERE d.status = 'pending' AND d.shop_id > w.shop_id
           ORDER BY d.shop_id LIMIT 1)
         FROM shops_waiting w WHERE w.shop_id IS NOT NULL
       )`;
  if (f.shopId !== undefined) {
    params.push(typeof f.shopId === 'number' ? [f.shopId] : f.shopId);
    shops = 'shops_waiting (shop_id) AS (SELECT DISTINCT unnest($8::int[]))';
  }
  const sql = sqlText(
    `claim ${f.shopId === undefined ? 'all' : 'given'}`,
    () =>
      `WITH ${shops}, due AS (
         SELECT c.id, c.shop_id, c.next_attempt_at
         FROM shops_waiting w JOIN shops sh ON sh.id = w.shop_id
           LEFT JOIN unnest($3::int[], $4::int[]) AS h (shop_id, held) ON h.shop_id = w.shop_id
           CROSS JOIN LATERAL (
             SELECT d.event_id AS id, d.shop_id, d.next_attempt_at
             FROM deliveries d
             WHERE d.shop_id = w.shop_id AND d.status = 'pending' AND d.next_attempt_at <= ${SHOP_NOW}
               AND (d.leased_until IS NULL OR d.leased_until <= $1)
               AND d.event_id = (SELECT min(p.event_id) FROM deliveries p
                 WHERE p.shop_id = d.shop_id AND p.resource_id = d.resource_id AND p.status = 'pending')
             ORDER BY d.next_attempt_at, d.event_id
             LIMIT greatest(0, least($6::int, $5::int - coalesce(h.held, 0)))
             FOR UPDATE OF d SKIP LOCKED
           ) c
         WHERE w.shop_id <> ALL($2::int[])
       ), picked AS (
         SELECT id, shop_id FROM due ORDER BY next_attempt_at, id LIMIT $6
       ), interrupted AS (
         INSERT INTO event_attempts (event_id, n, at, duration_ms, error, shop_id)
         SELECT d.event_id, d.attempts, d.next_attempt_at - $7 * interval '1 millisecond', 0,
           'no answer recorded: the process sending it stopped', d.shop_id
         FROM deliveries d JOIN picked p ON p.id = d.event_id AND p.shop_id = d.shop_id
         WHERE d.leased_until IS NOT NULL AND d.attempts > 0
         ON CONFLICT DO NOTHING
       )
       UPDATE deliveries d SET attempts = d.attempts + 1,
         next_attempt_at = ${SHOP_NOW} + $7 * interval '1 millisecond',
         leased_until = $1::timestamptz + $7 * interval '1 millisecond'
       FROM picked p, shops sh, events e
       WHERE d.event_id = p.id AND d.shop_id = p.shop_id AND sh.id = d.shop_id AND e.id = d.event_id
         AND e.shop_id = d.shop_id
       RETURNING d.event_id AS id, d.shop_id, e.event, e.payload, e.url, d.attempts, d.series_from,
         sh.test, sh.clock_offset_ms, sh.private_key_enc, sh.secret_enc, sh.notification_auth,
         sh.webhook_secret_enc, sh.webhook_secret_prev_enc, sh.webhook_secret_prev_until`,
  );
  return { sql, params };
}

export interface AttemptRecord {
  eventId: number;
  /** The event's shop. */
  shopId: number;
  n: number;
  /** The series the attempt belonged to when claimed: a resend since then starts another. */
  seriesFrom: number;
  at: Date;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
  /** The Kopek-Signature header sent; null when nothing was sent signed. */
  kopekSignature?: string | null;
}

/** What the attempt leads to: delivered, another attempt at `retryAt`, or failed for good. */
export type Next = { kind: 'delivered' } | { kind: 'retry'; at: Date } | { kind: 'failed' };

const UPSERT_ATTEMPT = `INSERT INTO event_attempts
    (event_id, n, at, status_code, duration_ms, response, error, kopek_signature, shop_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (event_id, n, shop_id) DO UPDATE SET at = EXCLUDED.at, status_code = EXCLUDED.status_code,
    duration_ms = EXCLUDED.duration_ms, response = EXCLUDED.response, error = EXCLUDED.error,
    kopek_signature = EXCLUDED.kopek_signature`;

// A 2xx ends the notification whoever holds it now; any other outcome changes it only while this
// attempt's lease is still the latest, so a late deliverer never undoes a newer attempt's result.
// Each finds the delivery by its primary key, event and shop, and only then asks whether it is still
// pending, in words that no index of pending deliveries answers (`status NOT IN ('delivered',
// 'failed')`, which the table's check makes the same as `status = 'pending'`): a partial index made
// while the table was empty says it holds nothing until statistics are collected, and PostgreSQL then
// looked for the one delivery by reading all of that index, one backlog's worth of entries per outcome.
const DELIVERED = `UPDATE deliveries SET status = 'delivered', delivered_at = $3, next_attempt_at = NULL,
    leased_until = CASE WHEN attempts = $2 THEN NULL ELSE leased_until END
  WHERE event_id = $1 AND shop_id = $4 AND status NOT IN ('delivered', 'failed')`;
const RETRY = `UPDATE deliveries SET next_attempt_at = $4, leased_until = NULL
  WHERE event_id = $1 AND shop_id = $5 AND attempts = $2 AND series_from = $3
    AND status NOT IN ('delivered', 'failed')`;
const FAILED = `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, leased_until = NULL
  WHERE event_id = $1 AND shop_id = $4 AND attempts = $2 AND series_from = $3
    AND status NOT IN ('delivered', 'failed')`;

/** The attempt's record and the event's new state, as one transaction. */
export function outcomeStatements(a: AttemptRecord, next: Next): Statement[] {
  const attempt: Statement = {
    sql: UPSERT_ATTEMPT,
    params: [
      a.eventId,
      a.n,
      a.at,
      a.statusCode,
      a.durationMs,
      a.response,
      a.error,
      a.kopekSignature ?? null,
      a.shopId,
    ],
  };
  if (next.kind === 'delivered')
    return [attempt, { sql: DELIVERED, params: [a.eventId, a.n, a.at, a.shopId] }];
  if (next.kind === 'retry')
    return [attempt, { sql: RETRY, params: [a.eventId, a.n, a.seriesFrom, next.at, a.shopId] }];
  return [attempt, { sql: FAILED, params: [a.eventId, a.n, a.seriesFrom, a.shopId] }];
}

const UPSERT_ATTEMPTS = `INSERT INTO event_attempts
    (event_id, n, at, status_code, duration_ms, response, error, kopek_signature, shop_id)
  SELECT * FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[],
    $7::text[], $8::text[], $9::int[])
  ON CONFLICT (event_id, n, shop_id) DO UPDATE SET at = EXCLUDED.at, status_code = EXCLUDED.status_code,
    duration_ms = EXCLUDED.duration_ms, response = EXCLUDED.response, error = EXCLUDED.error,
    kopek_signature = EXCLUDED.kopek_signature`;

// DELIVERED, RETRY and FAILED above, row by row, in one statement: the same conditions and the
// same new values for each kind of outcome.
const SETTLE_MANY = `UPDATE deliveries e SET
    status = CASE o.kind WHEN 'delivered' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE e.status END,
    delivered_at = CASE WHEN o.kind = 'delivered' THEN o.at ELSE e.delivered_at END,
    next_attempt_at = CASE WHEN o.kind = 'retry' THEN o.retry_at END,
    leased_until = CASE WHEN o.kind = 'delivered' AND e.attempts <> o.n THEN e.leased_until END
  FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::timestamptz[], $6::timestamptz[],
    $7::int[]) AS o(id, n, series_from, kind, at, retry_at, shop_id)
  WHERE e.event_id = o.id AND e.shop_id = o.shop_id AND e.status NOT IN ('delivered', 'failed')
    AND (o.kind = 'delivered' OR (e.attempts = o.n AND e.series_from = o.series_from))`;

/**
 * Many attempts' records and their events' new state, as one transaction of two statements: what
 * outcomeStatements does for each, with one commit for all. Each event appears once.
 */
export function outcomesStatements(list: readonly { record: AttemptRecord; next: Next }[]): Statement[] {
  // By event id: two writers settling overlapping rows lock them in the same order.
  const sorted = [...list].sort((x, y) => x.record.eventId - y.record.eventId);
  const ids: number[] = [];
  const ns: number[] = [];
  const ats: Date[] = [];
  const codes: (number | null)[] = [];
  const durations: number[] = [];
  const responses: (string | null)[] = [];
  const errors: (string | null)[] = [];
  const signatures: (string | null)[] = [];
  const shops: number[] = [];
  const series: number[] = [];
  const kinds: string[] = [];
  const retryAts: (Date | null)[] = [];
  for (const { record: a, next } of sorted) {
    ids.push(a.eventId);
    ns.push(a.n);
    ats.push(a.at);
    codes.push(a.statusCode);
    durations.push(a.durationMs);
    responses.push(a.response);
    errors.push(a.error);
    signatures.push(a.kopekSignature ?? null);
    shops.push(a.shopId);
    series.push(a.seriesFrom);
    kinds.push(next.kind);
    retryAts.push(next.kind === 'retry' ? next.at : null);
  }
  return [
    { sql: UPSERT_ATTEMPTS, params: [ids, ns, ats, codes, durations, responses, errors, signatures, shops] },
    { sql: SETTLE_MANY, params: [ids, ns, series, kinds, ats, retryAts, shops] },
  ];
}
