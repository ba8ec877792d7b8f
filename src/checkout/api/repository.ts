import { inIndexOrder } from '../../db/claim-plan.js';
import type { Queryable, Tx } from '../../db/db.js';
import type { CtpOrder, CtpSettings, CtpTransactionType } from './input.js';

/** The checkouts of the platform's checkout API (table ctp_checkouts). */

export type CtpStatus = 'successful' | 'failed' | 'error' | 'incomplete';

export interface CtpRow {
  token: string;
  shop_id: number;
  transaction_type: CtpTransactionType;
  attempts: number | null;
  failed_attempts: number;
  test: boolean;
  version: string | null;
  order: CtpOrder;
  settings: CtpSettings;
  customer: Record<string, string> | null;
  payment_method: Record<string, unknown> | null;
  /** Opened with `checkout.iframe: true`: its page is laid out for a frame on the shop's page. */
  iframe: boolean;
  status: CtpStatus | null;
  message: string | null;
  gateway_response: { transaction: Record<string, unknown> } | null;
  transaction_uid: string | null;
  /** How many tries at paying were claimed; the current (or last) try's key is `{token}-{tries}`. */
  tries: number;
  /** Set while a try is claimed and its outcome not yet recorded. */
  paying_until: Date | null;
  created_at: Date;
  expires_at: Date;
  finished_at: Date | null;
  expiry_announced_at: Date | null;
}

export type NewCtp = Pick<
  CtpRow,
  | 'token'
  | 'shop_id'
  | 'transaction_type'
  | 'attempts'
  | 'test'
  | 'version'
  | 'order'
  | 'settings'
  | 'customer'
  | 'payment_method'
  | 'iframe'
  | 'created_at'
  | 'expires_at'
>;

const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

export async function insertCtp(db: Queryable, c: NewCtp): Promise<CtpRow> {
  const [row] = await db.query<CtpRow>(
    `INSERT INTO ctp_checkouts (token, shop_id, transaction_type, attempts, test, version, "order", settings,
       customer, payment_method, created_at, expires_at, iframe)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *`,
    [
      c.token,
      c.shop_id,
      c.transaction_type,
      c.attempts,
      c.test,
      c.version,
      json(c.order),
      json(c.settings),
      json(c.customer),
      json(c.payment_method),
      c.created_at,
      c.expires_at,
      c.iframe,
    ],
  );
  return row as CtpRow;
}

export async function findCtp(db: Queryable, token: string): Promise<CtpRow | undefined> {
  const [row] = await db.query<CtpRow>('SELECT * FROM ctp_checkouts WHERE token = $1', [token]);
  return row;
}

/**
 * Claims the checkout for one more try at paying, until `until`: only while it is unfinished,
 * unexpired, not waiting for a 3-D Secure step and not claimed by another try (a claim whose process
 * died stays until resolveStaleTry asked the gateway about it). A conditional UPDATE: of two posts of
 * one form, exactly one gets the row. `formTry`, when the form names the try it was shown for, must
 * still be the current one: a form posted twice after a decline makes one new try, not two.
 */
export async function claimCtp(
  db: Queryable,
  token: string,
  now: Date,
  until: Date,
  formTry?: number,
): Promise<CtpRow | undefined> {
  const [row] = await db.query<CtpRow>(
    `UPDATE ctp_checkouts SET paying_until = $3, tries = tries + 1
     WHERE token = $1 AND finished_at IS NULL AND expires_at > $2
       AND status IS DISTINCT FROM 'incomplete'
       AND paying_until IS NULL
       AND ($4::int IS NULL OR tries = $4::int)
     RETURNING *`,
    [token, now, until, formTry ?? null],
  );
  return row;
}

/** Lets go of try `tries` without an outcome: the gateway never took it. */
export async function releaseCtp(db: Queryable, token: string, tries: number): Promise<boolean> {
  const rows = await db.query(
    'UPDATE ctp_checkouts SET paying_until = NULL WHERE token = $1 AND tries = $2 AND paying_until IS NOT NULL RETURNING token',
    [token, tries],
  );
  return rows.length > 0;
}

/** Locks the checkout while try `tries` is still claimed and unanswered; undefined otherwise. */
export async function lockClaimedTry(db: Tx, token: string, tries: number): Promise<CtpRow | undefined> {
  const [row] = await db.query<CtpRow>(
    'SELECT * FROM ctp_checkouts WHERE token = $1 AND tries = $2 AND paying_until IS NOT NULL FOR UPDATE',
    [token, tries],
  );
  return row;
}

export interface CtpOutcome {
  status: CtpStatus;
  message: string | null;
  gatewayResponse: { transaction: Record<string, unknown> };
  uid: string | null;
  failed: boolean;
  finished: boolean;
}

/** Records a try's outcome and lets go of the claim. */
export async function recordCtpOutcome(
  db: Queryable,
  token: string,
  o: CtpOutcome,
  now: Date,
): Promise<CtpRow> {
  const [row] = await db.query<CtpRow>(
    `UPDATE ctp_checkouts SET status = $2, message = $3, gateway_response = $4,
       transaction_uid = COALESCE($5::uuid, transaction_uid),
       failed_attempts = failed_attempts + $6, paying_until = NULL,
       finished_at = CASE WHEN $7 OR (attempts IS NOT NULL AND failed_attempts + $6 >= attempts) THEN $8::timestamptz ELSE NULL END
     WHERE token = $1 RETURNING *`,
    [token, o.status, o.message, json(o.gatewayResponse), o.uid, o.failed ? 1 : 0, o.finished, now],
  );
  if (!row) throw new Error(`checkout ${token} vanished while its outcome was recorded`);
  return row;
}

/** Like recordCtpOutcome, for an answer that arrives later (3-D Secure): once, while still incomplete. */
export async function settleCtp(
  db: Tx,
  token: string,
  o: CtpOutcome,
  now: Date,
): Promise<CtpRow | undefined> {
  const [locked] = await db.query<CtpRow>(
    `SELECT * FROM ctp_checkouts WHERE token = $1 AND status = 'incomplete' FOR UPDATE`,
    [token],
  );
  if (!locked) return undefined;
  return recordCtpOutcome(db, token, o, now);
}

/**
 * Claims checkouts that expired unpaid and were not announced, marks them expired (status `error`,
 * "Token is expired.") and announced; each on its shop's clock. SKIP LOCKED, as the subscription pages.
 * In index order whatever the statistics say (inIndexOrder), and only as far as the latest shop's
 * clock: what it reads grows with what expired, not with how many checkouts are open.
 */
export async function claimExpiredCtps(
  db: Tx,
  realNow: Date,
  limit: number,
  shopId?: number,
): Promise<CtpRow[]> {
  return inIndexOrder(db, () =>
    db.query<CtpRow>(
      `UPDATE ctp_checkouts SET expiry_announced_at = $1, status = 'error', message = $3
       WHERE token IN (
         SELECT c.token FROM ctp_checkouts c JOIN shops s ON s.id = c.shop_id
         WHERE ${UNANNOUNCED_CTP} AND ($4::int IS NULL OR c.shop_id = $4::int)
           AND c.expires_at <= $1::timestamptz + (CASE WHEN s.test THEN s.clock_offset_ms ELSE 0 END) * interval '1 millisecond'
           AND c.expires_at <= $1::timestamptz + (SELECT max(clock_offset_ms) FROM shops) * interval '1 millisecond'
         ORDER BY c.expires_at LIMIT $2
         FOR UPDATE OF c SKIP LOCKED)
       RETURNING *`,
      [realNow, limit, EXPIRED_MESSAGE, shopId ?? null],
    ),
  );
}

/** A checkout whose expiry is still to be announced (when it expires unpaid, not waiting for a bank). */
export const UNANNOUNCED_CTP =
  "c.finished_at IS NULL AND c.expiry_announced_at IS NULL AND (c.status IS NULL OR c.status IN ('failed', 'error'))";

export const EXPIRED_MESSAGE = 'Token is expired.';
