import type { Services } from '../context.js';
import {
  type AttemptOptions,
  type DeliveryLimits,
  type DeliveryObserver,
  deliverOne,
  type Summary,
} from './attempt.js';
import { OutcomeWriter } from './outcomes.js';
import { claimDue, type DueRow } from './queue.js';

/**
 * The deliverers: due notifications are claimed in short transactions (leased, each attempt number
 * taken once, however many instances run), sent outside any transaction, and their outcome recorded.
 * Every delivery holds one of a fixed number of slots, and a shop may hold only a few of them, so a
 * receiver that hangs until the timeout slows its own shop only.
 */

/** How long a claimed notification is held: well over the send timeout, so it is never sent twice at once. */
export const LEASE_MS = 60_000;

export interface DeliverOptions {
  /** Deliver only this shop's (or these shops') notifications. */
  shopId?: number | readonly number[];
  observer?: DeliveryObserver;
  limits?: DeliveryLimits;
  /** The send timeout (10 s); tests shorten it. */
  timeoutMs?: number;
  /** The jitter's source, in [0, 1). */
  random?: () => number;
}

export const emptySummary = (): Summary => ({ attempts: 0, delivered: 0, retrying: 0, failed: 0 });

export class DeliveryPool {
  readonly summary = emptySummary();
  /** Called whenever a delivery has finished: a slot is free, and its resource's next event may be due. */
  onSettled: (() => void) | undefined;
  readonly #byShop = new Map<number, number>();
  readonly #running = new Set<Promise<void>>();
  #settled = 0;
  #waiters: (() => void)[] = [];
  readonly #limits: DeliveryLimits;
  /** Outcomes are written in groups, one commit for the deliveries that finished together. */
  readonly outcomes: OutcomeWriter;
  readonly #attemptOptions: AttemptOptions;

  constructor(
    private readonly services: Services,
    private readonly opts: DeliverOptions = {},
  ) {
    this.#limits = opts.limits ?? {
      total: services.config.notifyConcurrency,
      perShop: services.config.notifyShopConcurrency,
    };
    this.outcomes = new OutcomeWriter(services.db);
    this.#attemptOptions = { ...opts, outcomes: this.outcomes };
  }

  get inFlight(): number {
    return this.#running.size;
  }

  /** How many deliveries have finished so far. */
  get settledCount(): number {
    return this.#settled;
  }

  /** Claims due notifications while slots are free and starts sending them; how many it started. */
  async fill(): Promise<number> {
    let started = 0;
    for (;;) {
      const free = this.#limits.total - this.inFlight;
      if (free <= 0) return started;
      const claimed = await this.#claim(free);
      if (claimed.length === 0) return started;
      for (const row of claimed) this.#start(row);
      started += claimed.length;
    }
  }

  /** Resolves when the next delivery in flight finishes. */
  oneSettled(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Waits for every delivery in flight. */
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  async #claim(free: number): Promise<DueRow[]> {
    const { perShop } = this.#limits;
    const filter = { limit: free, held: this.#byShop, perShop, shopId: this.opts.shopId };
    const claimed = await claimDue(this.services.db, this.services.clock.now(), filter, LEASE_MS);
    // Oldest first, as they were chosen (RETURNING keeps no order).
    return claimed.sort((a, b) => a.id - b.id);
  }

  #start(row: DueRow): void {
    const shop = row.shop_id;
    this.#byShop.set(shop, (this.#byShop.get(shop) ?? 0) + 1);
    const run = deliverOne(this.services, row, this.summary, this.#attemptOptions)
      .catch((err: unknown) =>
        // The lease runs out and another attempt is made: at least once, whatever failed here.
        this.services.log.error({ err, event: row.id }, 'recording a notification attempt failed'),
      )
      .finally(() => {
        const left = (this.#byShop.get(shop) ?? 1) - 1;
        if (left > 0) this.#byShop.set(shop, left);
        else this.#byShop.delete(shop);
        this.#running.delete(run);
        this.#settled += 1;
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const w of waiters) w();
        this.onSettled?.();
      });
    this.#running.add(run);
  }
}

/**
 * Delivers everything due now and waits for it, including what becomes due as earlier events of the
 * same resource are delivered; what failed and waits for a retry is left for later runs.
 */
export async function deliverDue(services: Services, opts: DeliverOptions = {}): Promise<Summary> {
  const pool = new DeliveryPool(services, opts);
  for (;;) {
    const settledBefore = pool.settledCount;
    const started = await pool.fill();
    if (pool.inFlight > 0) {
      await pool.oneSettled();
      continue;
    }
    if (started === 0 && pool.settledCount === settledBefore) break;
  }
  return pool.summary;
}
