/**
 * The one reading of the dates and instants requests carry (a product's and a checkout's
 * `expired_at`, the test clock's `to`, a birth date): ISO 8601 / RFC 3339 text, on the calendar,
 * between the years 1 and 9999.
 *
 * - An instant is `YYYY-MM-DDThh:mm[:ss[.fraction]]` with an offset: `Z`, `+hh:mm` or `+hhmm`
 *   (the platform's clients write both), at most 14 hours either way, as real offsets are.
 * - What a date alone, or a time without an offset, means is the caller's to say (`Reading`);
 *   by default they are not instants.
 * - Dates the calendar does not have (Feb 30, 24:00) are not read.
 * - Years outside 1–9999, before or after applying the offset, are out of range: the stores
 *   disagree about them (PostgreSQL keeps year 0 as 1 BC, the embedded store fails) and JavaScript
 *   writes them in another form (`+010000-…`), so no client could read them back.
 */
import { instantAt, type WallTime } from './zoned-time.js';

export const FIRST_YEAR = 1;
export const LAST_YEAR = 9999;
const MAX_OFFSET_MINUTES = 14 * 60;

// An expanded year (±YYYYYY) is read only to be told apart as out of range.
const ISO =
  /^([+-]\d{6}|\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?)?$/;

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/** How a text without an offset is read: refused, or as a wall time of `timeZone`. */
export interface Reading {
  /** `YYYY-MM-DD` alone: the end of that day in UTC (a product's expiry), or its start in `timeZone`. */
  dateAlone?: 'end-of-day-utc' | 'start-of-day';
  /** A time without an offset is the wall time of this IANA zone; refused when not given. */
  timeZone?: string;
}

export type InstantResult =
  | { ok: true; at: Date }
  /** `range`: a well-formed text whose year, or instant, lies outside 1–9999; `after` tells which side. */
  | { ok: false; reason: 'format' }
  | { ok: false; reason: 'range'; after: boolean };

const inRange = (at: Date) => {
  const y = at.getUTCFullYear();
  return y >= FIRST_YEAR && y <= LAST_YEAR;
};

/** Reads an ISO 8601 instant (see the file comment); what went wrong when it is not one. */
export function readInstant(text: string, how: Reading = {}): InstantResult {
  const m = ISO.exec(text);
  if (!m) return { ok: false, reason: 'format' };
  const n = (i: number) => Number(m[i] ?? 0);
  const [year, month, day] = [n(1), n(2), n(3)];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month))
    return { ok: false, reason: 'format' };
  const hasTime = m[4] !== undefined;
  const [hour, minute, second] = [n(4), n(5), n(6)];
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: 'format' };
  const hasOffset = m[8] !== undefined || m[9] !== undefined;
  const offsetMinutes = (m[9] === '-' ? -1 : 1) * (n(10) * 60 + n(11));
  if (hasOffset && (n(11) > 59 || Math.abs(offsetMinutes) > MAX_OFFSET_MINUTES))
    return { ok: false, reason: 'format' };
  if (!hasTime && how.dateAlone === undefined) return { ok: false, reason: 'format' };
  if (hasTime && !hasOffset && how.timeZone === undefined) return { ok: false, reason: 'format' };
  if (year < FIRST_YEAR || year > LAST_YEAR) return { ok: false, reason: 'range', after: year > LAST_YEAR };
  const millisecond = Number((m[7] ?? '0').slice(0, 3).padEnd(3, '0'));
  const wall: WallTime = { year, month, day, hour, minute, second, millisecond };
  let at: Date;
  if (!hasTime && how.dateAlone === 'end-of-day-utc') {
    at = new Date(0);
    at.setUTCFullYear(year, month - 1, day);
    at.setUTCHours(23, 59, 59, 999);
  } else if (!hasOffset) {
    at = instantAt(
      hasTime ? wall : { ...wall, hour: 0, minute: 0, second: 0, millisecond: 0 },
      how.timeZone ?? 'UTC',
    );
  } else {
    at = new Date(0);
    at.setUTCFullYear(year, month - 1, day);
    at.setUTCHours(hour, minute, second, millisecond);
    at = new Date(at.getTime() - offsetMinutes * 60_000);
  }
  if (!inRange(at)) return { ok: false, reason: 'range', after: year === LAST_YEAR };
  return { ok: true, at };
}

/** The instant, or undefined for anything `readInstant` does not take. */
export function parseInstant(text: string, how: Reading = {}): Date | undefined {
  const r = readInstant(text, how);
  return r.ok ? r.at : undefined;
}

/** `YYYY-MM-DD`, a day the calendar has, in the years 1–9999 (a birth date). */
export function isCalendarDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && readInstant(text, { dateAlone: 'end-of-day-utc' }).ok;
}
