import type { Queryable } from '../db/db.js';

/**
 * A store for @fastify/rate-limit kept in the database: every instance behind the load balancer
 * counts the same sign-in attempts, so adding instances does not multiply an attacker's guesses.
 * Fixed windows, one row per key; the database's clock decides the window for all instances.
 */

type Answer = { current: number; ttl: number };
type Callback = (error: Error | null, answer: Answer) => void;

export function databaseRateLimitStore(db: Queryable) {
  return class DatabaseRateLimitStore {
    incr(key: string, callback: Callback, timeWindow: number): void {
      db.query<{ hits: number; ttl: number }>(
        `INSERT INTO cabinet_rate_limits AS r (key, hits, resets_at)
         VALUES ($1, 1, now() + make_interval(secs => $2::double precision / 1000))
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN r.resets_at <= now() THEN 1 ELSE r.hits + 1 END,
           resets_at = CASE WHEN r.resets_at <= now() THEN EXCLUDED.resets_at ELSE r.resets_at END
         RETURNING hits, (extract(epoch FROM resets_at - now()) * 1000)::float8 AS ttl`,
        [key, timeWindow],
      ).then(
        ([row]) => callback(null, { current: row?.hits ?? 1, ttl: Math.max(0, Number(row?.ttl ?? 0)) }),
        (error: Error) => callback(error, { current: 0, ttl: 0 }),
      );
    }

    read(key: string, callback: Callback): void {
      db.query<{ hits: number; ttl: number }>(
        `SELECT hits, (extract(epoch FROM resets_at - now()) * 1000)::float8 AS ttl
           FROM cabinet_rate_limits WHERE key = $1 AND resets_at > now()`,
        [key],
      ).then(
        ([row]) => callback(null, row ? { current: row.hits, ttl: Number(row.ttl) } : { current: 0, ttl: 0 }),
        (error: Error) => callback(error, { current: 0, ttl: 0 }),
      );
    }

    child() {
      return new DatabaseRateLimitStore();
    }
  };
}
