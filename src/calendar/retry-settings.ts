/**
 * Checks a shop's billing settings as `PATCH /shop` receives them: time zone, retry schedule and
 * quiet hours. Each answers the value to store, or the messages for that field in the contract's
 * style (decisions.md, Error bodies), e.g. `errors.retry_schedule: ["failed must be a list of ..."]`.
 */
import { durationMs, type QuietHours, type RetrySchedule } from './retry-schedule.js';
import { canonicalTimeZone } from './zoned-time.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export const MAX_RETRY_DELAYS = 20;
// At least a minute, so a broken schedule cannot hammer the gateway; at most a month's worth, as
// a subscription left unpaid for longer is better cancelled than kept waiting.
const MIN_DELAY_MS = 60_000;
const MAX_DELAY_MS = 30 * 24 * 3_600_000;
const MAX_DURATION_LENGTH = 40;

const Msg = {
  timeZone: 'is not an IANA time zone such as Europe/Minsk or UTC',
  schedule: 'must be an object such as {"failed": ["P1D", "P3D"], "error": ["PT1H"]}',
  delays: 'must be a list of ISO 8601 durations such as PT1H or P1D',
  count: `must have 1 to ${MAX_RETRY_DELAYS} delays`,
  range: 'must be between PT1M and P30D',
  quietHours: 'must be an object such as {"start": "20:00", "end": "08:00"}',
  time: (example: string) => `must be a time of day such as ${example}`,
  sameTime: 'must differ from start',
} as const;

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(errors: string[]): Parsed<T> => ({ ok: false, errors });

/** A shop's time zone: an IANA name (letter case ignored, answered in its usual spelling). */
export function parseTimeZone(value: unknown): Parsed<string> {
  const zone = typeof value === 'string' ? canonicalTimeZone(value.trim()) : undefined;
  return zone === undefined ? fail([Msg.timeZone]) : ok(zone);
}

/** One outcome's delays, upper-cased and trimmed; messages start with `label` when one is given. */
function parseDelays(value: unknown, label: string, errors: string[]): string[] | undefined {
  const found: string[] = [];
  const say = (message: string) => found.push(label ? `${label} ${message}` : message);
  const delays: string[] = [];
  if (!Array.isArray(value)) say(Msg.delays);
  else if (value.length < 1 || value.length > MAX_RETRY_DELAYS) say(Msg.count);
  else {
    for (const item of value) {
      const text = typeof item === 'string' ? item.trim().toUpperCase() : '';
      const ms = text.length <= MAX_DURATION_LENGTH ? durationMs(text) : undefined;
      // One message for the shape of the list, not one per item.
      if (ms === undefined) {
        say(Msg.delays);
        break;
      }
      if (ms < MIN_DELAY_MS || ms > MAX_DELAY_MS) say(`delay ${text} ${Msg.range}`);
      else delays.push(text);
    }
  }
  errors.push(...found);
  return found.length === 0 ? delays : undefined;
}

/**
 * A shop's retry schedule: `{ failed?: [...], error?: [...] }`, 1 to 20 delays each, PT1M to P30D.
 * A bare list is shorthand for the same delays for both outcomes. null, undefined or an object
 * with neither list is null: the platform's rule. A member that is null or absent keeps the
 * platform's rule for that outcome; other members are ignored, as unknown fields are everywhere.
 */
export function parseRetrySchedule(value: unknown): Parsed<RetrySchedule | null> {
  if (value === null || value === undefined) return ok(null);
  const errors: string[] = [];
  if (Array.isArray(value)) {
    const delays = parseDelays(value, '', errors);
    return delays ? ok({ failed: delays, error: [...delays] }) : fail(errors);
  }
  if (typeof value !== 'object') return fail([Msg.schedule]);
  const input = value as Record<string, unknown>;
  const schedule: RetrySchedule = {};
  for (const outcome of ['failed', 'error'] as const) {
    const member = input[outcome];
    if (member === null || member === undefined) continue;
    const delays = parseDelays(member, outcome, errors);
    if (delays) schedule[outcome] = delays;
  }
  if (errors.length > 0) return fail(errors);
  return ok(schedule.failed || schedule.error ? schedule : null);
}

/** "HH:MM" from "HH:MM" or "H:MM", 00:00 to 23:59. */
function parseTime(value: unknown): string | undefined {
  const m = typeof value === 'string' ? /^(\d{1,2}):([0-5]\d)$/.exec(value.trim()) : null;
  if (!m || Number(m[1]) > 23) return undefined;
  return `${m[1]?.padStart(2, '0')}:${m[2]}`;
}

/**
 * A shop's quiet hours: `{ start: "20:00", end: "08:00" }`, local time in the shop's zone; start
 * after end crosses midnight. null or undefined: none. start equal to end is refused, as it could
 * mean no window or a whole day of no charging.
 */
export function parseQuietHours(value: unknown): Parsed<QuietHours | null> {
  if (value === null || value === undefined) return ok(null);
  if (typeof value !== 'object' || Array.isArray(value)) return fail([Msg.quietHours]);
  const input = value as Record<string, unknown>;
  const start = parseTime(input.start);
  const end = parseTime(input.end);
  const errors: string[] = [];
  if (start === undefined) errors.push(`start ${Msg.time('20:00')}`);
  if (end === undefined) errors.push(`end ${Msg.time('08:00')}`);
  else if (end === start) errors.push(`end ${Msg.sameTime}`);
  return start === undefined || end === undefined || errors.length > 0 ? fail(errors) : ok({ start, end });
}
