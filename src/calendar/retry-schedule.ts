/**
 * When a renewal charge that failed is tried again (decisions.md, Subscriptions: "the platform's
 * rule (next day 03:00, errors hourly) is the default; each shop can set its own schedule").
 *
 * A shop's schedule has a list of delays per outcome, so a decline (the card said no: waiting for
 * payday helps) and an error (the gateway could not decide: trying soon helps) can differ. An
 * outcome without a list keeps the platform's rule. Delays are exact lengths, as a plan's hour,
 * day and week are: P1D is 24 hours, also on the day the shop's clocks change.
 */
import { instantAt, instantsAt, isTimeZone, wallTimeAt } from './zoned-time.js';

export type FailedOutcome = 'failed' | 'error';

/** Delays as ISO 8601 durations; the nth retry uses the nth, the last one repeats. */
export interface RetrySchedule {
  failed?: string[];
  error?: string[];
}

/** Local "HH:MM" times; start after end means the window crosses midnight (20:00 to 08:00). */
export interface QuietHours {
  start: string;
  end: string;
}

export interface NextAttemptInput {
  outcome: FailedOutcome;
  /** 1 after the first failure. */
  failuresSoFar: number;
  failedAt: Date;
  /** IANA name; default UTC. */
  timeZone?: string;
  schedule?: RetrySchedule | null;
  quietHours?: QuietHours | null;
}

/** The platform's hour for retrying a declined charge, local time. */
export const DEFAULT_RETRY_HOUR = 3;
const HOUR_MS = 3_600_000;
const SECOND_MS = 1000;
const DURATION_UNITS_S = { W: 604_800, D: 86_400, H: 3600, M: 60, S: 1 } as const;
// Weeks, days, hours, minutes, seconds in whole numbers: years and months have no fixed length.
const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

/** The length of an ISO 8601 duration in ms, or undefined when it is not one Kopek takes. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  const [, w, d, h, min, s] = m;
  const parts: [string | undefined, number][] = [
    [w, DURATION_UNITS_S.W],
    [d, DURATION_UNITS_S.D],
    [h, DURATION_UNITS_S.H],
    [min, DURATION_UNITS_S.M],
    [s, DURATION_UNITS_S.S],
  ];
  return parts.reduce((ms, [n, unit]) => ms + (n === undefined ? 0 : Number(n) * unit * SECOND_MS), 0);
}

/**
 * When the next attempt is due after the `failuresSoFar`-th failure at `failedAt`.
 *
 * The platform's rule: a decline is tried the next calendar day at 03:00 local time, also when it
 * happened at 01:00 (03:00 the same day would be a second charge within hours of the first, which
 * the platform's "next day" does not mean); an error is tried an hour later. Then an attempt that
 * falls in the shop's quiet hours waits for their end.
 */
export function nextAttemptAt(input: NextAttemptInput): Date {
  const { outcome, failuresSoFar, failedAt, timeZone = 'UTC' } = input;
  if (!Number.isSafeInteger(failuresSoFar) || failuresSoFar < 1)
    throw new RangeError(`failures so far must be 1 or more: ${failuresSoFar}`);
  if (Number.isNaN(failedAt.getTime())) throw new RangeError('failedAt is not a valid date');
  // Checked whatever the path, so a bad setting shows on the first retry, not only on a decline.
  if (!isTimeZone(timeZone)) throw new RangeError(`unknown time zone: ${String(timeZone).slice(0, 64)}`);
  const delays = input.schedule?.[outcome];
  let due: Date;
  if (delays && delays.length > 0) {
    const delay = delays[Math.min(failuresSoFar, delays.length) - 1] ?? '';
    const ms = durationMs(delay);
    if (ms === undefined || ms <= 0) throw new RangeError(`not a retry delay: ${delay.slice(0, 40)}`);
    due = new Date(failedAt.getTime() + ms);
  } else if (outcome === 'error') {
    due = new Date(failedAt.getTime() + HOUR_MS);
  } else {
    const today = wallTimeAt(failedAt, timeZone);
    // Day 32 and the like roll over into the next month in instantAt's date arithmetic.
    due = instantAt(
      { ...today, day: today.day + 1, hour: DEFAULT_RETRY_HOUR, minute: 0, second: 0, millisecond: 0 },
      timeZone,
    );
  }
  return input.quietHours ? afterQuietHours(due, input.quietHours, timeZone) : due;
}

/** Minutes since local midnight of an "HH:MM" time. */
export function minutesOfDay(time: string): number {
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(time);
  if (!m) throw new RangeError(`not a time of day: ${time.slice(0, 10)}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/**
 * `at`, or the end of the quiet hours it falls in: the first instant after `at` when the local
 * clock shows the end time. Whether `at` is quiet is read on the local clock, so in a fall-back
 * overlap an hour may be quiet twice. An end time the clocks skip is read with the gap rule, as
 * every local time in billing is (02:30 on a day that jumps 02:00 → 03:00 is 03:30): a little
 * later than the clocks left the window, never inside it.
 */
export function afterQuietHours(at: Date, quiet: QuietHours, timeZone = 'UTC'): Date {
  const start = minutesOfDay(quiet.start);
  const end = minutesOfDay(quiet.end);
  const local = wallTimeAt(at, timeZone);
  const now = local.hour * 60 + local.minute;
  const quietNow = start < end ? now >= start && now < end : now >= start || now < end;
  if (!quietNow) return at;
  for (const dayAhead of [0, 1]) {
    const wall = {
      ...local,
      day: local.day + dayAhead,
      hour: Math.floor(end / 60),
      minute: end % 60,
      second: 0,
      millisecond: 0,
    };
    const both = instantsAt(wall, timeZone);
    for (const candidate of both.length > 0 ? both : [instantAt(wall, timeZone)]) {
      if (candidate.getTime() > at.getTime()) return candidate;
    }
  }
  // Unreachable: tomorrow's end is always after a moment inside tonight's window.
  throw new RangeError('quiet hours never end');
}
