/**
 * Calendar arithmetic for billing periods (decisions.md, Plans), in UTC unless a shop's IANA time
 * zone is given.
 *
 * Month and year steps keep the ORIGINAL anchor day and clamp it to the target month's last day:
 * from Jan 31 the ends are Feb 28 (29 in a leap year), Mar 31, Apr 30. Stepping from a clamped date
 * would drift (Feb 28 + 1 month = Mar 28), so renewals compute period n from the anchor with
 * `nthPeriodEnd` instead of adding one interval to the previous end.
 *
 * In a time zone, month and year steps keep the local day and local time of day; a local time that
 * a daylight-saving change skips or repeats is resolved as zoned-time.ts says (gap: forward by the
 * gap; overlap: the earlier instant). Hour, day and week stay exact lengths in every zone: a "day"
 * plan lasts 24 hours, so its local time moves by an hour across a change.
 */
import { instantAt, type WallTime, wallTimeAt } from './zoned-time.js';

export const INTERVAL_UNITS = ['hour', 'day', 'week', 'month', 'year'] as const;
export type IntervalUnit = (typeof INTERVAL_UNITS)[number];

const HOUR_MS = 60 * 60 * 1000;
// Exact lengths: a day plan is 24 hours even on the day a shop's clocks change.
const FIXED_MS: Record<'hour' | 'day' | 'week', number> = {
  hour: HOUR_MS,
  day: 24 * HOUR_MS,
  week: 7 * 24 * HOUR_MS,
};

export function isIntervalUnit(value: unknown): value is IntervalUnit {
  return typeof value === 'string' && (INTERVAL_UNITS as readonly string[]).includes(value);
}

/** Days in a month of the proleptic Gregorian calendar; month is 0-based as in Date. */
export function daysInMonth(year: number, month0: number): number {
  // Day 0 of the next month is the last day of this one (setUTCFullYear, unlike Date.UTC, takes
  // years below 100 literally).
  const d = new Date(0);
  d.setUTCFullYear(year, month0 + 1, 0);
  return d.getUTCDate();
}

/**
 * `from` plus `count` units. For month and year the day of month is `anchorDay` (default: the day
 * of `from`), clamped to the last day of the target month; the time of day is kept. Both are read
 * in `timeZone` (an IANA name; default UTC, which gives exactly the results Kopek always gave).
 */
export function addInterval(
  from: Date,
  count: number,
  unit: IntervalUnit,
  anchorDay?: number,
  timeZone = 'UTC',
): Date {
  if (!Number.isSafeInteger(count)) throw new RangeError(`interval count must be an integer: ${count}`);
  if (Number.isNaN(from.getTime())) throw new RangeError('interval start is not a valid date');
  const zoned = timeZone !== 'UTC';
  // Read once up front so an unknown zone fails for every unit, not only for months.
  const local = zoned ? wallTimeAt(from, timeZone) : undefined;
  if (unit === 'hour' || unit === 'day' || unit === 'week') {
    return new Date(from.getTime() + count * FIXED_MS[unit]);
  }
  const day = anchorDay ?? local?.day ?? from.getUTCDate();
  if (!Number.isInteger(day) || day < 1 || day > 31) throw new RangeError(`anchor day must be 1..31: ${day}`);
  const months = unit === 'year' ? count * 12 : count;
  if (local) return addLocalMonths(from, local, months, day, timeZone);
  // A month index outside 0..11 rolls over into the right year.
  const first = new Date(0);
  first.setUTCFullYear(from.getUTCFullYear(), from.getUTCMonth() + months, 1);
  const year = first.getUTCFullYear();
  const month0 = first.getUTCMonth();
  const target = new Date(from.getTime());
  target.setUTCFullYear(year, month0, Math.min(day, daysInMonth(year, month0)));
  return target;
}

function addLocalMonths(
  from: Date,
  local: WallTime,
  months: number,
  anchorDay: number,
  timeZone: string,
): Date {
  const index = local.year * 12 + local.month - 1 + months;
  const year = Math.floor(index / 12);
  const month0 = index - year * 12;
  const day = Math.min(anchorDay, daysInMonth(year, month0));
  // The same local date is `from` itself: resolving its wall time again could pick the other
  // instant of an overlap.
  if (year === local.year && month0 === local.month - 1 && day === local.day) return new Date(from.getTime());
  return instantAt({ ...local, year, month: month0 + 1, day }, timeZone);
}

/** The day of month a clock in `timeZone` shows at `at`: a subscription's billing day. */
export function localDayOfMonth(at: Date, timeZone = 'UTC'): number {
  return timeZone === 'UTC' ? at.getUTCDate() : wallTimeAt(at, timeZone).day;
}

/**
 * The end of billing period `n` (1 = the first) of a schedule that started at `anchor` and repeats
 * every `count` units; n = 0 is the anchor itself. Computed from the anchor, never from the
 * previous end, so a Jan 31 schedule still ends on Mar 31 after February, and a 02:30 schedule
 * is back at 02:30 the month after a spring-forward day moved it to 03:30.
 */
export function nthPeriodEnd(
  anchor: Date,
  n: number,
  count: number,
  unit: IntervalUnit,
  timeZone = 'UTC',
): Date {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`period number must be a whole number: ${n}`);
  if (!Number.isSafeInteger(count) || count < 1)
    throw new RangeError(`interval must be at least 1: ${count}`);
  return addInterval(anchor, n * count, unit, localDayOfMonth(anchor, timeZone), timeZone);
}
