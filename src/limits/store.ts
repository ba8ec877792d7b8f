import type { Queryable } from '../db/db.js';

/**
 * Where Kopek's limits keep their counters: the API's per-shop budgets (limits/budget.ts) and the
 * cabinet's sign-in limits (cabinet/sign-in-limits.ts). Every instance that shares the store shares
 * the counts: PostgreSQL's `cabinet_rate_limits` table, or Redis when REDIS_URL is set; the embedded
 * store, one process only, keeps them in memory. Time is always the caller's (the injected clock):
 * no implementation reads a clock of its own to decide whether a window has ended.
 */
export interface LimitStore {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /**
   * Counts `n` more on `key`. A counter whose window has ended (or that does not exist) starts again
   * at `n` with its window ending at `until`; a live one keeps its end, or moves it to `until` when
   * `extend` is set. With `cap`, the count never passes `cap + n` (it need not count further: at
   * `cap` nothing more is granted). Answers the count and the window's end after the change.
   */
  add(key: string, n: number, now: Date, until: Date, opts?: AddOptions): Promise<Counter>;
  /** The counter of `key`, when its window has not ended and it counts more than 0. */
  read(key: string, now: Date): Promise<Counter | undefined>;
  /** Counts `n` fewer on `key` (never below 0), keeping its window. */
  takeBack(key: string, n?: number): Promise<void>;
  /** Forgets `key`'s counter. */
  forget(key: string): Promise<void>;
  /** Lets go of what the store holds open (a Redis connection); the counters stay where they are. */
  close(): Promise<void>;
}

export interface AddOptions {
  extend?: boolean;
  cap?: number;
}

export interface Counter {
  hits: number;
  resetsMs: number;
}

/** How much of `n` a count that went up by `n` to `hits` granted under `cap`. */
export function grantedOf(hits: number, n: number, cap: number): number {
  return Math.max(0, Math.min(n, cap - (hits - n)));
}

// The counters' column is an integer: an uncapped count stops at its largest value.
const MAX_HITS = 2_147_483_647;
const ceilingOf = (n: number, cap: number | undefined) =>
  cap === undefined ? MAX_HITS : Math.min(MAX_HITS, cap + n);

/**
 * Counters in this process only: for the embedded store, which one process holds at a time. Counters
 * whose window has ended are swept out now and then, so memory follows the keys in use.
 */
export function memoryLimitStore(): LimitStore {
  const counters = new Map<string, Counter>();
  let nextSweepMs = 0;
  const sweep = (nowMs: number) => {
    if (nowMs < nextSweepMs && counters.size < 10_000) return;
    for (const [key, c] of counters) if (c.resetsMs <= nowMs) counters.delete(key);
    nextSweepMs = nowMs + 60_000;
  };
  return {
    kind: 'memory',
    async add(key, n, now, until, opts = {}) {
      const nowMs = now.getTime();
      sweep(nowMs);
      const c = counters.get(key);
      let next: Counter;
      if (!c || c.resetsMs <= nowMs) next = { hits: n, resetsMs: until.getTime() };
      else
        next = {
          hits: Math.min(c.hits + n, ceilingOf(n, opts.cap)),
          resetsMs: opts.extend ? until.getTime() : c.resetsMs,
        };
      counters.set(key, next);
      return { ...next };
    },
    async read(key, now) {
      const c = counters.get(key);
      return c && c.resetsMs > now.getTime() && c.hits > 0 ? { ...c } : undefined;
    },
    async takeBack(key, n = 1) {
      const c = counters.get(key);
      if (c) c.hits = Math.max(0, c.hits - n);
    },
    async forget(key) {
      counters.delete(key);
    },
    async close() {
      counters.clear();
    },
  };
}

/**
 * Counters in PostgreSQL's `cabinet_rate_limits` table (migration 019; named for its first use, it
 * keeps every limit's counters), shared by every instance on the database. Each call is one
 * statement; `kopek serve` deletes rows whose window has ended (cabinet/sessions.ts).
 */
export function postgresLimitStore(db: Queryable, prefix = ''): LimitStore {
  const row = (r: { hits: number; resets_ms: number } | undefined, fallback: Counter): Counter =>
    r ? { hits: Number(r.hits), resetsMs: Number(r.resets_ms) } : fallback;
  return {
    kind: 'postgres',
    async add(key, n, now, until, opts = {}) {
      const keepEnd = opts.extend ? 'EXCLUDED.resets_at' : 'r.resets_at';
      const [r] = await db.query<{ hits: number; resets_ms: number }>(
        `INSERT INTO cabinet_rate_limits AS r (key, hits, resets_at) VALUES ($1, $4, $3)
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN r.resets_at <= $2 THEN $4 ELSE LEAST(r.hits + $4, $5) END,
           resets_at = CASE WHEN r.resets_at <= $2 THEN EXCLUDED.resets_at ELSE ${keepEnd} END
         RETURNING hits, (extract(epoch FROM resets_at) * 1000)::float8 AS resets_ms`,
        [prefix + key, now, until, n, ceilingOf(n, opts.cap)],
      );
      return row(r, { hits: n, resetsMs: until.getTime() });
    },
    async read(key, now) {
      const [r] = await db.query<{ hits: number; resets_ms: number }>(
        `SELECT hits, (extract(epoch FROM resets_at) * 1000)::float8 AS resets_ms
           FROM cabinet_rate_limits WHERE key = $1 AND resets_at > $2 AND hits > 0`,
        [prefix + key, now],
      );
      return r ? row(r, { hits: 0, resetsMs: 0 }) : undefined;
    },
    async takeBack(key, n = 1) {
      await db.query('UPDATE cabinet_rate_limits SET hits = GREATEST(hits - $2, 0) WHERE key = $1', [
        prefix + key,
        n,
      ]);
    },
    async forget(key) {
      await db.query('DELETE FROM cabinet_rate_limits WHERE key = $1', [prefix + key]);
    },
    async close() {},
  };
}
