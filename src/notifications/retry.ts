/**
 * When a failed notification is tried again. The first retries come within a minute, so a receiver
 * that was restarting or briefly unreachable gets its notification almost at once; then the delays
 * grow to 8 hours and stay there until the series has lasted more than three days.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The delay after each failed attempt of a series: the n-th entry follows attempt n. */
export const RETRY_DELAYS_MS: readonly number[] = [
  10 * SECOND,
  30 * SECOND,
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  4 * HOUR,
  ...Array.from({ length: 9 }, () => 8 * HOUR),
];

/** Attempts in one series: the first plus one after each delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * Jitter only lengthens a delay (by up to a fifth), so the series never ends sooner than three days,
 * and receivers that failed at the same moment are not all tried again at the same moment.
 */
export const JITTER = 0.2;

/**
 * The delay before the next attempt after attempt `n` (1-based, within its series) failed, or
 * undefined when that was the last one and the notification has failed. `random` is in [0, 1).
 */
export function retryDelayMs(n: number, random: number): number | undefined {
  const base = RETRY_DELAYS_MS[n - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (1 + JITTER * Math.min(Math.max(random, 0), 1)));
}
