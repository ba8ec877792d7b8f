/** What the renewal benchmark (renewals.ts) and its worker processes (renewals-worker.ts) say to each other. */
import type { BillingSummary } from '../src/billing/renew.js';

/** Parent to worker: start now. After its result the worker waits for `{type: 'exit'}` to disconnect. */
export interface Go {
  type: 'go';
  /** Baseline only: seconds of inserts not counted, then seconds counted. */
  warmupSec?: number;
  durationSec?: number;
}

export interface Ready {
  type: 'ready';
}

/** What a process used during its run (not before it: module loading and connecting are left out). */
export interface Usage {
  /** Wall-clock milliseconds from `go` to the end of the run. */
  ms: number;
  /** CPU milliseconds, all threads. */
  cpuMs: number;
  /** Peak resident set size over the process's whole life (getrusage), in MB. */
  maxRssMb: number;
  /** Resident set size when `go` came, and the highest seen while it ran (sampled every 20 ms), in MB. */
  rssAtStartMb: number;
  rssPeakRunMb: number;
  /** Resident set size each second of the run, in MB: flat, or growing with the work done. */
  rssEverySecondMb: number[];
  /** V8 heap in use at the end of the run, in MB. */
  heapUsedMb: number;
}

export interface EngineDone extends Usage {
  type: 'engine-done';
  summary: BillingSummary;
  /** Statements sent (a BEGIN and a COMMIT count as statements), by statement. */
  statements: Record<string, number>;
  /** Round trips to PostgreSQL: a statement alone, or a batch of them, each one. */
  roundTrips: number;
  transactions: number;
  /** The run's start and end in microseconds of process.hrtime, the clock of a CPU profile's samples. */
  window: { from: number; to: number };
}

export interface BaselineDone extends Usage {
  type: 'baseline-done';
  /** Rows inserted in the counted seconds, and in all (warm-up included). */
  rows: number;
  allRows: number;
}

export type FromWorker = Ready | EngineDone | BaselineDone | { type: 'failed'; error: string };
