/**
 * Where `POST /test_clock/advance` (and `kopek clock advance`) moves a test shop's clock: exactly one
 * of `to`, an ISO 8601 instant, or `by`, an ISO 8601 duration added on the shop's calendar. Errors
 * are the contract's field errors (decisions.md, Error bodies).
 */
import { DateTime, Duration } from 'luxon';
import { Type } from 'typebox';
import { LAST_YEAR, readInstant } from '../calendar/iso-instant.js';
import { ErrorCollector } from '../core/errors.js';
import { addFormat, checkBody, enforced, type RuleCheck, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';

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

// Whether a text reads as an instant does not depend on the time zone it is then read in.
addFormat('clock-instant', (t) => {
  const read = readInstant(t.trim(), { dateAlone: 'start-of-day', timeZone: 'UTC' });
  return read.ok || read.reason !== 'format';
});
addFormat('iso-duration', (t) => Duration.fromISO(t.trim().toUpperCase()).isValid);

/** Text of at most 64 characters, not blank, in `format`: anything else reads `message`. */
const Moment = (format: string, message: string, description: string, examples: string[]) =>
  Type.Optional(
    Type.String({
      maxLength: MAX_TEXT,
      pattern: '\\S',
      format,
      description,
      examples,
      [MESSAGES]: { type: message, maxLength: message, pattern: message, format: message },
    }),
  );

/** Exactly one of the two is given; one given as blank text is still given, and not a moment. */
function exactlyOne(body: Record<string, unknown>, check: RuleCheck): void {
  if (isGiven(body.to) === isGiven(body.by)) {
    check.add('base', AdvanceMsg.oneOf);
    return;
  }
  const blank = (v: unknown) => typeof v === 'string' && v.trim() === '';
  if (blank(body.to)) check.add('to', AdvanceMsg.instant);
  if (blank(body.by)) check.add('by', AdvanceMsg.duration);
}

/**
 * `POST /test_clock/advance`. The schema states what each field must read as; exactly one of them
 * is a rule beside it. Where the instant falls (in the shop's time zone, after its clock, before the
 * year 9999) is advanceTarget's to say.
 */
export const AdvanceInput = enforced(
  withRules(
    Type.Object(
      {
        to: Moment(
          'clock-instant',
          AdvanceMsg.instant,
          'ISO 8601 instant; without an offset it is read in the shop time zone',
          ['2027-01-31T10:00:00Z'],
        ),
        by: Moment(
          'iso-duration',
          AdvanceMsg.duration,
          'ISO 8601 duration added in the shop time zone (P1M from Jan 31 is Feb 28); fractions in seconds only',
          ['P1M', 'P1Y', 'PT36H'],
        ),
      },
      { description: 'Exactly one of to and by; the clock only moves forward' },
    ),
    exactlyOne,
  ),
);

/**
 * The instant named by `to` (text AdvanceInput let through), in the shared reading of instants. One
 * without an offset (`2027-01-31`, `2027-01-31T09:00`) is read on the shop's wall clock, which is
 * what a shop testing "the first of the month" means. The reason, when it is not one Kopek takes.
 */
function instantOf(value: string, timeZone: string, now: Date): DateTime | string {
  const read = readInstant(value.trim(), { dateAlone: 'start-of-day', timeZone });
  if (!read.ok && read.reason === 'format') return AdvanceMsg.instant;
  // Before the year 1 is before the shop's clock too.
  if (!read.ok) return read.after ? AdvanceMsg.tooFar : AdvanceMsg.forward(now.toISOString());
  return DateTime.fromJSDate(read.at, { zone: timeZone });
}

/**
 * `now` plus the duration `by` in the shop's time zone, so P1M from Jan 31 is Feb 28 and P1D keeps
 * the local time of day across a change of the clocks. Fractions only in seconds: "P1.5M" has no
 * agreed meaning. A negative one is read, and refused as going back.
 */
function plusDuration(value: string, now: DateTime): DateTime | string {
  const duration = Duration.fromISO(value.trim().toUpperCase());
  const parts = Object.entries(duration.toObject());
  if (parts.some(([unit, n]) => unit !== 'seconds' && unit !== 'milliseconds' && !Number.isInteger(n)))
    return AdvanceMsg.wholeUnits;
  return now.plus(duration);
}

/**
 * The target instant, after the shop's current time `now`; throws the contract's 422 otherwise.
 * The route checked AdvanceInput already; `kopek clock advance` is checked here alike.
 */
export function advanceTarget(body: unknown, now: Date, timeZone: string): Date {
  const errors = new ErrorCollector();
  if (!checkBody(AdvanceInput, body, errors)) errors.throwIfAny();
  const input = body as Record<string, string | undefined>;
  const field = isGiven(input.to) ? 'to' : 'by';
  const start = DateTime.fromJSDate(now, { zone: timeZone });
  const target =
    field === 'to' ? instantOf(input.to as string, timeZone, now) : plusDuration(input.by as string, start);
  if (typeof target === 'string') errors.add(field, target);
  else if (!target.isValid || target.toUTC().year > LAST_YEAR) errors.add(field, AdvanceMsg.tooFar);
  else if (target.toMillis() <= now.getTime()) errors.add(field, AdvanceMsg.forward(now.toISOString()));
  errors.throwIfAny();
  return (target as DateTime).toJSDate();
}
