import type { Clock } from '../clock.js';
import { grantedOf, type LimitStore } from './store.js';

/** `limit` requests per fixed window of `windowMs`, per key (a shop). */
export interface RateRule {
  limit: number;
  windowMs: number;
}

export type Verdict = { ok: true } | { ok: false; retryAfterMs: number };

/** A shared store is asked for this share of a window's budget at a time (at least 1 request). */
export const LEASE_SHARE = 50;

interface Lease {
  /** The window's end, as the store keeps it. */
  resetsMs: number;
  /** Requests this instance may still answer in the window without asking the store. */
  left: number;
  /** The store granted less than was asked: the window's budget is spent, nothing more comes. */
  spent: boolean;
}

/**
 * A fixed-window budget per key, counted in a LimitStore, so every instance on the store spends one
 * budget. On memory (one process) the whole budget is leased at once. An instance on a shared store
 * (PostgreSQL, Redis) takes the budget in leases of
 * 1/LEASE_SHARE of it (1 request when the limit is under LEASE_SHARE) and answers from its lease
 * until it is used up, so a busy shop costs the store one statement per lease, not per request. The
 * store never grants more than the limit in a window, so all instances together never answer more;
 * what an instance leased and did not use by the window's end is lost (at most one lease each).
 * Once the store has said the budget is spent, the instance turns requests away until the window
 * ends without asking again. Windows follow the injected clock.
 *
 * Why not @fastify/rate-limit: its stores (memory, Redis, or a custom one) are asked on every
 * request, which on PostgreSQL, the store every deployment has, is a write to one hot row per request
 * of a shop; leases keep that to one statement per 1/LEASE_SHARE of the budget.
 */
export class Budget {
  readonly #leases = new Map<string, Lease>();
  readonly #asking = new Map<string, Promise<void>>();
  readonly #lease: number;
  #nextSweepMs = 0;

  constructor(
    private readonly store: LimitStore,
    private readonly rule: RateRule,
    private readonly clock: Clock,
  ) {
    // Memory is this process's alone: the whole budget is one lease, exactly as counting each request.
    this.#lease = store.kind === 'memory' ? rule.limit : Math.max(1, Math.floor(rule.limit / LEASE_SHARE));
  }

  /** Spends one request of `key`'s budget, or says how long until its window ends. */
  async take(key: string): Promise<Verdict> {
    for (;;) {
      const nowMs = this.clock.now().getTime();
      this.#sweep(nowMs);
      const lease = this.#leases.get(key);
      if (lease && lease.resetsMs > nowMs) {
        if (lease.left > 0) {
          lease.left -= 1;
          return { ok: true };
        }
        if (lease.spent) return { ok: false, retryAfterMs: lease.resetsMs - nowMs };
      }
      // One question to the store at a time per key; the requests that arrive meanwhile wait for it.
      let asking = this.#asking.get(key);
      if (!asking) {
        asking = this.#ask(key, nowMs).finally(() => this.#asking.delete(key));
        this.#asking.set(key, asking);
      }
      await asking;
    }
  }

  async #ask(key: string, nowMs: number): Promise<void> {
    const n = this.#lease;
    const counter = await this.store.add(key, n, new Date(nowMs), new Date(nowMs + this.rule.windowMs), {
      cap: this.rule.limit,
    });
    const granted = grantedOf(counter.hits, n, this.rule.limit);
    this.#leases.set(key, { resetsMs: counter.resetsMs, left: granted, spent: granted < n });
  }

  #sweep(nowMs: number): void {
    if (nowMs < this.#nextSweepMs && this.#leases.size < 10_000) return;
    for (const [key, lease] of this.#leases) if (lease.resetsMs <= nowMs) this.#leases.delete(key);
    this.#nextSweepMs = nowMs + this.rule.windowMs;
  }
}
