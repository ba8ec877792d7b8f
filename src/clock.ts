/** The only place that reads the wall clock; everything else receives a Clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock standing at one instant: a charge decided in the same batch as its subscription's change
 * is decided at the instant of that change, so the payment is never stamped after the change it
 * caused (a first charge declined at 10:00:00.040 cancelling its subscription at 10:00:00.000).
 */
export function fixedClock(at: Date): Clock {
  const ms = at.getTime();
  return { now: () => new Date(ms) };
}

/** A clock that only moves when told to: used by tests and by test shops' simulated time. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string = '2026-01-15T10:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  set(to: Date | string): void {
    this.#ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

let lastTime = Number.NaN;
let lastIso = '';

/**
 * `d.toISOString()`, remembered for the last instant formatted: a request writes and answers its one
 * `now` a dozen times over (row columns, answer fields), and formatting a date is not cheap.
 */
export function isoString(d: Date): string {
  const t = d.getTime();
  if (t !== lastTime) {
    lastIso = d.toISOString();
    lastTime = t;
  }
  return lastIso;
}
