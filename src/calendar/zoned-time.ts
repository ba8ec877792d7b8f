/**
 * Wall-clock time in a shop's IANA time zone. Offsets come from the time zone database (Intl,
 * through luxon), never from a table of our own.
 *
 * A wall time that does not exist (the spring-forward gap) or exists twice (the fall-back overlap)
 * is resolved as Temporal's "compatible" disambiguation and java.time do:
 * - gap: moved forward by the length of the gap (02:30 on a day that jumps 02:00 → 03:00 is 03:30);
 * - overlap: the earlier of the two instants (01:30 on a day that falls back 02:00 → 01:00 is the
 *   first 01:30, still in summer time), so nothing is charged an hour later than the clock first
 *   showed that time.
 */
import { IANAZone } from 'luxon';

/** A local date and time of day; month is 1-based, as people write it. */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
// Only names: Intl would also take offsets such as "+03:00", which are not a place and have no DST.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

let known: Map<string, string> | undefined;

/**
 * The zone's usual spelling when `name` is an IANA time zone (letter case ignored: "europe/minsk"
 * gives "Europe/Minsk"), otherwise undefined. Links Intl does not list, such as "Europe/Kyiv" on
 * an older ICU or "US/Eastern", are kept as given when Intl accepts them.
 */
export function canonicalTimeZone(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length > 64 || !ZONE_NAME.test(name)) return undefined;
  known ??= new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
  // Intl.supportedValuesOf leaves UTC out on some Node versions although every Intl accepts it.
  if (name.toLowerCase() === 'utc') return 'UTC';
  return known.get(name.toLowerCase()) ?? (IANAZone.isValidZone(name) ? name : undefined);
}

export function isTimeZone(name: unknown): name is string {
  return canonicalTimeZone(name) !== undefined;
}

function zoneOf(timeZone: string): IANAZone {
  if (!isTimeZone(timeZone)) throw new RangeError(`unknown time zone: ${String(timeZone).slice(0, 64)}`);
  return IANAZone.create(timeZone);
}

/** The offset from UTC in ms at instant `ms`. */
function offsetMs(zone: IANAZone, ms: number): number {
  return zone.offset(ms) * MINUTE_MS;
}

/** Milliseconds of a wall time read as if it were UTC; years below 100 are taken literally. */
function wallMs(w: WallTime): number {
  const d = new Date(0);
  d.setUTCFullYear(w.year, w.month - 1, w.day);
  d.setUTCHours(w.hour, w.minute, w.second, w.millisecond);
  return d.getTime();
}

/** What a clock in `timeZone` shows at instant `at`. */
export function wallTimeAt(at: Date, timeZone: string): WallTime {
  const ms = at.getTime();
  if (Number.isNaN(ms)) throw new RangeError('not a valid date');
  const d = new Date(ms + offsetMs(zoneOf(timeZone), ms));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    millisecond: d.getUTCMilliseconds(),
  };
}

/**
 * Every instant at which a clock in `timeZone` shows `wall`: one normally, two in an overlap
 * (earlier first), none in a gap. A zone changes its offset at most once within a day of any
 * moment, so the offsets a day before and a day after cover every case.
 */
export function instantsAt(wall: WallTime, timeZone: string): Date[] {
  const zone = zoneOf(timeZone);
  const local = wallMs(wall);
  const found = new Set<number>();
  for (const guess of [local - DAY_MS, local + DAY_MS]) {
    const offset = offsetMs(zone, guess);
    const instant = local - offset;
    if (offsetMs(zone, instant) === offset) found.add(instant);
  }
  return [...found].sort((a, b) => a - b).map((ms) => new Date(ms));
}

/** The instant a clock in `timeZone` shows `wall`, with the gap and overlap rule above. */
export function instantAt(wall: WallTime, timeZone: string): Date {
  const [first] = instantsAt(wall, timeZone);
  if (first) return first;
  // In a gap, reading the wall time with the offset from before the change lands as far past the
  // change as the wall time is past its start.
  const local = wallMs(wall);
  return new Date(local - offsetMs(zoneOf(timeZone), local - DAY_MS));
}
