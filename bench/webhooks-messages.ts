/** What the webhook benchmark (webhooks.ts) and its worker processes (webhooks-worker.ts) say to each other. */
import type { Usage } from './renewals-messages.js';

/**
 * Parent to worker: `go` starts the run; a deliverer answers `lap` with what it did since the last
 * one (or since `go`) and goes on, and `stop` with its last lap once its deliveries on their way have
 * finished. After its last result a worker waits for `exit` to disconnect.
 */
export type ToWorker =
  | { type: 'go'; warmupSec?: number; durationSec?: number }
  | { type: 'lap' }
  | { type: 'stop' }
  | { type: 'exit' };

export interface Ready {
  type: 'ready';
}

/** What a deliverer did in one lap. */
export interface DeliverLap extends Usage {
  type: 'lap';
  /** Attempts by outcome, as the loop's observer saw them. */
  outcomes: { delivered: number; retry: number; failed: number };
  /** Statements sent (a BEGIN and a COMMIT count as statements), by statement. */
  statements: Record<string, number>;
  roundTrips: number;
  transactions: number;
  /** The lap's start and end in microseconds of process.hrtime, the clock of a CPU profile's samples. */
  window: { from: number; to: number };
}

export interface BaselineDone extends Usage {
  type: 'baseline-done';
  /** POSTs answered in the counted seconds, and in all (warm-up included); answers other than 2xx. */
  posts: number;
  allPosts: number;
  non2xx: number;
  concurrency: number;
}

export type FromWorker = Ready | DeliverLap | BaselineDone | { type: 'failed'; error: string };
