/**
 * Where `POST /test_clock/advance` (and `kopek clock advance`) moves a test shop's clock: exactly one
 * of `to`, an ISO 8601 instant, or `by`, an ISO 8601 duration added on the shop's calendar. Errors
 * are the contract's field errors (decisions.md, Error bodies).
 */
import { DateTime, Duration } from 'luxon';
import { LAST_YEAR, readInstant } from '../calendar/iso-instant.js';
import { ErrorCollector } from '../core/errors.js';

const MAX_TEXT = 64;

export const AdvanceMsg = {
  oneOf: 'Give exactly one of to (an ISO 8601 instant) or by (an ISO 8601 duration such as P1M)',
  instant: 'must be an ISO 8601 date and time such as 2027-01-31T10:00:00Z',
  duration: 'must be an ISO 8601 duration such as P1M, P1Y or PT36H',
  wholeUnits: 'may have a fraction in its seconds only',
  tooFar: `must stay within the year ${LAST_YEAR}`,
  forward: (now: string) => `must move the clock forward: the shop's clock already shows ${now}`,
} as const;

const isGiven = (v: unknown) => v !== undefined && v !== null;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' && value.length <= MAX_TEXT
    ? value.trim()
    : undefined;
}

/**
 * The instant named by `to`, in the shared reading of instants. One without an offset
 * (`2027-01-31`, `2027-01-31T09:00`) is read on the shop's wall clock, which is what a shop testing
 * "the first of the month" means. The reason, when it is not an instant Kopek takes.
 */
function instantOf(value: unknown, timeZone: string, now: Date): DateTime | string {
  const t = text(value);
  const read = t === undefined ? undefined : readInstant(t, { dateAlone: 'start-of-day', timeZone });
  if (!read || (!read.ok && read.reason === 'format')) return AdvanceMsg.instant;
  // Before the year 1 is before the shop's clock too.
  if (!read.ok) return read.after ? AdvanceMsg.tooFar : AdvanceMsg.forward(now.toISOString());
  return DateTime.fromJSDate(read.at, { zone: timeZone });
}

/**
 * `now` plus the duration `by` in the shop's time zone, so P1M from Jan 31 is Feb 28 and P1D keeps
 * the local time of day across a change of the clocks. Fractions only in seconds: "P1.5M" has no
 * agreed meaning. A negative one is read, and refused as going back. The reason, when it is not a
 * duration Kopek takes.
 */
function plusDuration(value: unknown, now: DateTime): DateTime | string {
  const t = text(value)?.toUpperCase();
  const duration = t === undefined ? undefined : Duration.fromISO(t);
  if (!duration?.isValid) return AdvanceMsg.duration;
  const parts = Object.entries(duration.toObject());
  if (parts.some(([unit, n]) => unit !== 'seconds' && unit !== 'milliseconds' && !Number.isInteger(n)))
    return AdvanceMsg.wholeUnits;
  return now.plus(duration);
}

/** The target instant, after the shop's current time `now`; throws the contract's 422 otherwise. */
export function advanceTarget(body: unknown, now: Date, timeZone: string): Date {
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const errors = new ErrorCollector();
  if (isGiven(input.to) === isGiven(input.by)) {
    errors.add('base', AdvanceMsg.oneOf);
    errors.throwIfAny();
  }
  const field = isGiven(input.to) ? 'to' : 'by';
  const start = DateTime.fromJSDate(now, { zone: timeZone });
  const target = field === 'to' ? instantOf(input.to, timeZone, now) : plusDuration(input.by, start);
  if (typeof target === 'string') errors.add(field, target);
  else if (!target.isValid || target.toUTC().year > LAST_YEAR) errors.add(field, AdvanceMsg.tooFar);
  else if (target.toMillis() <= now.getTime()) errors.add(field, AdvanceMsg.forward(now.toISOString()));
  errors.throwIfAny();
  return (target as DateTime).toJSDate();
}
