import type { ListParams } from '../core/paging.js';
import { inIndexOrder } from '../db/claim-plan.js';
import type { Queryable, Tx } from '../db/db.js';
import { listPage } from '../db/list.js';
import type { MailKind, OutboxEvent } from './compose.js';

/**
 * E-mail's questions to the store. The outbox is the fan-out's queue (events whose mail_status is
 * pending) and the emails table is the sender's (pending e-mails whose next attempt is due on their
 * shop's clock); both are claimed with SKIP LOCKED, so any number of instances share the work.
 */

export type EmailStatus = 'pending' | 'sent' | 'failed' | 'kept';

export interface EmailRow {
  id: string;
  shop_id: number;
  event_id: number;
  kind: MailKind;
  about: string;
  recipient: string;
  subject: string;
  text: string;
  html: string;
  language: string;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: Date | null;
  leased_until: Date | null;
  sent_at: Date | null;
  last_error: string | null;
  created_at: Date;
}

/**
 * Up to `limit` events not yet turned into e-mails, oldest first, locked against other fan-outs. In
 * index order whatever the statistics say (inIndexOrder): a backlog is never read whole to take a few.
 */
export function lockUnmailedEvents(tx: Tx, limit: number, shopId?: number): Promise<OutboxEvent[]> {
  const shop = shopId === undefined ? '' : ' AND shop_id = $2';
  // NO KEY UPDATE: webhook attempts referencing these rows still go in while the fan-out runs.
  return inIndexOrder(tx, () =>
    tx.query<OutboxEvent>(
      `SELECT id, shop_id, resource_type, resource_id, event, payload, created_at FROM events
       WHERE mail_status = 'pending'${shop} ORDER BY id LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED`,
      shopId === undefined ? [limit] : [limit, shopId],
    ),
  );
}

export async function markEventsMailed(tx: Tx, ids: number[]): Promise<void> {
  await tx.query(`UPDATE events SET mail_status = 'done' WHERE id = ANY($1::bigint[])`, [ids]);
}

/** The subscription as the outbox last announced it before event `before`, by shop and id. */
export async function announcedSubscription(
  db: Queryable,
  shopId: number,
  subscriptionId: string,
  before: number,
): Promise<Record<string, unknown> | undefined> {
  const [row] = await db.query<{ payload: Record<string, unknown> }>(
    `SELECT payload FROM events WHERE resource_id = $1 AND id < $2 AND shop_id = $3
       AND resource_type = 'subscription' ORDER BY id DESC LIMIT 1`,
    [subscriptionId, before, shopId],
  );
  return row?.payload;
}

export interface NewEmail {
  id: string;
  shopId: number;
  eventId: number;
  kind: MailKind;
  about: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  language: string;
  status: 'pending' | 'kept';
  nextAttemptAt: Date | null;
  createdAt: Date;
}

/** Stores an e-mail unless its shop already has one of that kind about the same thing. */
export async function insertEmail(tx: Tx, e: NewEmail): Promise<boolean> {
  const rows = await tx.query(
    `INSERT INTO emails (id, shop_id, event_id, kind, about, recipient, subject, text, html, language,
       status, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (shop_id, kind, about) DO NOTHING RETURNING id`,
    [
      e.id,
      e.shopId,
      e.eventId,
      e.kind,
      e.about,
      e.to,
      e.subject,
      e.text,
      e.html,
      e.language,
      e.status,
      e.nextAttemptAt,
      e.createdAt,
    ],
  );
  return rows.length > 0;
}

/** An e-mail claimed for sending, with what its envelope needs from its shop. */
export interface ClaimedEmail extends EmailRow {
  shop_name: string;
  reply_to: string | null;
  clock_offset_ms: number;
}

/**
 * Claims up to `limit` due e-mails: counts the attempt and leases them on real time for `leaseMs`,
 * so a sender that dies mid-send leaves them to another after the lease. In index order whatever the
 * statistics say (inIndexOrder), and only as far as the latest shop's clock: what it reads grows with
 * what is due, not with how many e-mails wait for a later attempt.
 */
export function claimDueEmails(
  tx: Tx,
  now: Date,
  limit: number,
  leaseMs: number,
  shopId?: number,
): Promise<ClaimedEmail[]> {
  const shop = shopId === undefined ? '' : ' AND em.shop_id = $4';
  const params: unknown[] = [now, limit, leaseMs];
  if (shopId !== undefined) params.push(shopId);
  return inIndexOrder(tx, () =>
    tx.query<ClaimedEmail>(
      `WITH due AS (
         SELECT em.id FROM emails em JOIN shops sh ON sh.id = em.shop_id
         WHERE em.status = 'pending'${shop}
           AND em.next_attempt_at <= $1::timestamptz + sh.clock_offset_ms * interval '1 millisecond'
           AND em.next_attempt_at <= $1::timestamptz
             + (SELECT max(clock_offset_ms) FROM shops) * interval '1 millisecond'
           AND (em.leased_until IS NULL OR em.leased_until <= $1::timestamptz)
         ORDER BY em.next_attempt_at LIMIT $2 FOR UPDATE OF em SKIP LOCKED
       )
       UPDATE emails em
         SET attempts = em.attempts + 1, leased_until = $1::timestamptz + $3::double precision * interval '1 millisecond'
         FROM due, shops sh WHERE em.id = due.id AND sh.id = em.shop_id
       RETURNING em.*, sh.name AS shop_name, sh.notification_email AS reply_to, sh.clock_offset_ms`,
      params,
    ),
  );
}

export type SendOutcome =
  | { status: 'sent'; at: Date }
  | { status: 'pending'; retryAt: Date; error: string }
  | { status: 'failed'; error: string };

/**
 * Records how attempt `attempt` ended. Nothing changes when another sender has claimed the e-mail
 * since (its lease ran out): that sender's attempt decides.
 */
export async function finishAttempt(
  db: Queryable,
  id: string,
  attempt: number,
  outcome: SendOutcome,
): Promise<void> {
  const when = 'WHERE id = $1 AND attempts = $2 AND status = $3';
  if (outcome.status === 'sent') {
    await db.query(
      `UPDATE emails SET status = 'sent', sent_at = $4, next_attempt_at = NULL, leased_until = NULL,
         last_error = NULL ${when}`,
      [id, attempt, 'pending', outcome.at],
    );
  } else if (outcome.status === 'pending') {
    await db.query(`UPDATE emails SET next_attempt_at = $4, leased_until = NULL, last_error = $5 ${when}`, [
      id,
      attempt,
      'pending',
      outcome.retryAt,
      outcome.error,
    ]);
  } else {
    await db.query(
      `UPDATE emails SET status = 'failed', next_attempt_at = NULL, leased_until = NULL,
         last_error = $4 ${when}`,
      [id, attempt, 'pending', outcome.error],
    );
  }
}

export interface EmailFilter {
  status?: EmailStatus;
  to?: string;
}

/** One page of a shop's e-mails, newest first (limit + 1 rows, see `page`). */
export function listEmails(
  db: Queryable,
  shopId: number,
  params: ListParams,
  filter: EmailFilter,
): Promise<EmailRow[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  if (filter.status !== undefined) {
    values.push(filter.status);
    conditions.push(` AND status = $${values.length + 2}`);
  }
  if (filter.to !== undefined) {
    values.push(filter.to.toLowerCase());
    conditions.push(` AND lower(recipient) = $${values.length + 2}`);
  }
  return listPage<EmailRow>(db, 'emails', shopId, params, { sql: conditions.join(''), values });
}

export async function findEmail(db: Queryable, shopId: number, id: string): Promise<EmailRow | undefined> {
  const [row] = await db.query<EmailRow>('SELECT * FROM emails WHERE shop_id = $1 AND id = $2', [shopId, id]);
  return row;
}
