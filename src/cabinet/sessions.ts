import { createHash, randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Queryable } from '../db/db.js';
import { every } from '../periodic.js';

/**
 * Cabinet sessions, kept in the store so any instance behind the load balancer serves any request
 * and signing out ends the session everywhere. The cookie holds a random value; the store only its
 * hash.
 */

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
/** …and in any case this long after sign-in. */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
// Refreshing the idle expiry on every request would write on every page view.
const TOUCH_EVERY_MS = 60 * 1000;

export interface CabinetSession {
  tokenHash: string;
  shopId: number;
  createdAt: Date;
  expiresAt: Date;
}

interface SessionRow {
  token_hash: string;
  shop_id: number;
  secret_hash: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  current_secret_hash: string | null;
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Starts a session; the returned token goes into the cookie and nowhere else. */
export async function startSession(
  db: Queryable,
  shopId: number,
  now: Date,
  userAgent: string | undefined,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  await db.query(
    `INSERT INTO cabinet_sessions (token_hash, shop_id, secret_hash, created_at, last_seen_at, expires_at, user_agent)
     SELECT $1, id, secret_hash, $3, $3, $4, $5 FROM shops WHERE id = $2`,
    [hashOf(token), shopId, now, expiresAt, userAgent?.slice(0, 255) ?? null],
  );
  return { token, expiresAt };
}

/**
 * The live session of a cookie value: unknown, expired, or made with a secret key the shop has
 * since rotated → undefined. Use moves the idle expiry on, within the absolute lifetime.
 */
export async function findSession(
  db: Queryable,
  token: string,
  now: Date,
): Promise<CabinetSession | undefined> {
  if (token.length === 0 || token.length > 100) return undefined;
  const [row] = await db.query<SessionRow>(
    `SELECT s.*, sh.secret_hash AS current_secret_hash
       FROM cabinet_sessions s LEFT JOIN shops sh ON sh.id = s.shop_id
      WHERE s.token_hash = $1`,
    [hashOf(token)],
  );
  if (!row || row.expires_at <= now || row.current_secret_hash !== row.secret_hash) return undefined;
  let expiresAt = row.expires_at;
  if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
    const cap = row.created_at.getTime() + SESSION_MAX_MS;
    expiresAt = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, cap));
    await db.query('UPDATE cabinet_sessions SET last_seen_at = $2, expires_at = $3 WHERE token_hash = $1', [
      row.token_hash,
      now,
      expiresAt,
    ]);
  }
  return { tokenHash: row.token_hash, shopId: row.shop_id, createdAt: row.created_at, expiresAt };
}

export async function endSession(db: Queryable, token: string): Promise<void> {
  await db.query('DELETE FROM cabinet_sessions WHERE token_hash = $1', [hashOf(token)]);
}

/**
 * How long a money form's one-time token is kept once used: far longer than any session (whose forms
 * are the only ones that can be posted), so a form posted again finds its token while it can be.
 */
export const FORM_NONCE_KEPT_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Drops sessions and rate-limit windows that have ended, and money forms' tokens past
 * FORM_NONCE_KEPT_MS (run now and then by `kopek serve`).
 */
export async function purgeCabinetState(db: Queryable, now: Date): Promise<void> {
  await db.query('DELETE FROM cabinet_sessions WHERE expires_at <= $1', [now]);
  await db.query('DELETE FROM cabinet_rate_limits WHERE resets_at <= $1', [now]);
  await db.query('DELETE FROM cabinet_form_nonces WHERE created_at <= $1', [
    new Date(now.getTime() - FORM_NONCE_KEPT_MS),
  ]);
}

/** Purges ended sessions and rate-limit windows every few minutes in a serving process. */
export function startCabinetPurge(deps: { db: Queryable; clock: { now(): Date }; log: FastifyBaseLogger }) {
  return every(5 * 60 * 1000, deps.log, 'purged ended cabinet sessions', async () => {
    await purgeCabinetState(deps.db, deps.clock.now());
    return 0;
  });
}
