import { describe, expect, it } from 'vitest';
import {
  durationMs,
  type NextAttemptInput,
  nextAttemptAt,
  type RetrySchedule,
} from '../../src/calendar/retry-schedule.js';
import { at, iso, local } from './local.js';

const NY = 'America/New_York';
const next = (input: Omit<NextAttemptInput, 'failedAt'> & { failedAt: string }) =>
  iso(nextAttemptAt({ ...input, failedAt: at(input.failedAt) }));

describe('the platform rule for a decline: the next calendar day at 03:00 local', () => {
  it.each<[string, string, string, string]>([
    ['UTC, midday', 'UTC', '2026-01-15T10:00:00.000Z', '2026-01-16T03:00:00.000Z'],
    ['UTC, 01:00 is still the next day', 'UTC', '2026-01-15T01:00:00.000Z', '2026-01-16T03:00:00.000Z'],
    ['UTC, 23:30', 'UTC', '2026-01-15T23:30:00.000Z', '2026-01-16T03:00:00.000Z'],
    ['UTC, month end', 'UTC', '2026-01-31T12:00:00.000Z', '2026-02-01T03:00:00.000Z'],
    ['UTC, year end', 'UTC', '2026-12-31T23:59:00.000Z', '2027-01-01T03:00:00.000Z'],
    ['UTC, leap day', 'UTC', '2028-02-28T12:00:00.000Z', '2028-02-29T03:00:00.000Z'],
    // 23:30 EST on Jan 15 is Jan 16 in UTC: the next local day is still Jan 16.
    ['New York, 23:30', NY, '2026-01-16T04:30:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['New York, 01:00', NY, '2026-01-15T06:00:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['New York, 23:30 before spring forward', NY, '2026-03-08T04:30:00.000Z', '2026-03-08T07:00:00.000Z'],
    ['New York, 01:00 on spring forward', NY, '2026-03-08T06:00:00.000Z', '2026-03-09T07:00:00.000Z'],
    ['New York, noon on spring forward', NY, '2026-03-08T16:00:00.000Z', '2026-03-09T07:00:00.000Z'],
    ['New York, 23:30 before fall back', NY, '2026-11-01T03:30:00.000Z', '2026-11-01T08:00:00.000Z'],
    ['New York, the second 01:30', NY, '2026-11-01T06:30:00.000Z', '2026-11-02T08:00:00.000Z'],
    // Kyiv skips 03:00 in March (gap rule: 04:00) and repeats it in October (the first one).
    ['Kyiv, 03:00 skipped', 'Europe/Kyiv', '2026-03-28T10:00:00.000Z', '2026-03-29T01:00:00.000Z'],
    ['Kyiv, 03:00 repeated', 'Europe/Kyiv', '2026-10-24T09:00:00.000Z', '2026-10-25T00:00:00.000Z'],
    ['Minsk, 01:00', 'Europe/Minsk', '2026-01-14T22:00:00.000Z', '2026-01-16T00:00:00.000Z'],
  ])('%s', (_, timeZone, failedAt, expected) => {
    expect(next({ outcome: 'failed', failuresSoFar: 1, failedAt, timeZone })).toBe(expected);
    // The rule does not depend on how many failures came before.
    expect(next({ outcome: 'failed', failuresSoFar: 4, failedAt, timeZone })).toBe(expected);
  });

  it('lands at 03:00 on the local clock', () => {
    const due = nextAttemptAt({
      outcome: 'failed',
      failuresSoFar: 1,
      failedAt: at('2026-03-08T04:30Z'),
      timeZone: NY,
    });
    expect(local(due, NY)).toBe('2026-03-08 03:00');
  });

  it('is in UTC when no zone is given', () => {
    expect(next({ outcome: 'failed', failuresSoFar: 1, failedAt: '2026-01-15T23:30:00Z' })).toBe(
      '2026-01-16T03:00:00.000Z',
    );
  });
});

describe('the platform rule for an error: an hour later, exactly', () => {
  it.each([
    ['UTC', '2026-01-15T23:30:00.000Z', '2026-01-16T00:30:00.000Z'],
    [NY, '2026-03-08T06:30:00.000Z', '2026-03-08T07:30:00.000Z'], // 01:30 EST → 03:30 EDT
    [NY, '2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z'], // the first 01:30 → the second
  ])('%s %s', (timeZone, failedAt, expected) => {
    for (const failuresSoFar of [1, 2, 7])
      expect(next({ outcome: 'error', failuresSoFar, failedAt, timeZone })).toBe(expected);
  });
});

describe("a shop's own schedule", () => {
  const schedule: RetrySchedule = { failed: ['PT1H', 'P1D', 'P3D'] };
  const failedAt = '2026-01-15T10:00:00.000Z';

  it.each([
    [1, '2026-01-15T11:00:00.000Z'],
    [2, '2026-01-16T10:00:00.000Z'],
    [3, '2026-01-18T10:00:00.000Z'],
    [4, '2026-01-18T10:00:00.000Z'],
    [20, '2026-01-18T10:00:00.000Z'],
  ])('failure %i: the delay for it, the last one repeating', (failuresSoFar, expected) => {
    expect(next({ outcome: 'failed', failuresSoFar, failedAt, schedule })).toBe(expected);
  });

  it('keeps the platform rule for an outcome without a list, or with an empty one', () => {
    expect(next({ outcome: 'error', failuresSoFar: 1, failedAt, schedule })).toBe('2026-01-15T11:00:00.000Z');
    expect(next({ outcome: 'failed', failuresSoFar: 1, failedAt, schedule: { error: ['PT5M'] } })).toBe(
      '2026-01-16T03:00:00.000Z',
    );
    expect(next({ outcome: 'failed', failuresSoFar: 1, failedAt, schedule: { failed: [] } })).toBe(
      '2026-01-16T03:00:00.000Z',
    );
    expect(next({ outcome: 'failed', failuresSoFar: 1, failedAt, schedule: null })).toBe(
      '2026-01-16T03:00:00.000Z',
    );
  });

  it('has a list for errors of its own', () => {
    const errors: RetrySchedule = { error: ['PT5M', 'PT30M'] };
    const dues = [1, 2, 3].map((n) =>
      next({ outcome: 'error', failuresSoFar: n, failedAt, schedule: errors }),
    );
    expect(dues).toEqual([
      '2026-01-15T10:05:00.000Z',
      '2026-01-15T10:30:00.000Z',
      '2026-01-15T10:30:00.000Z',
    ]);
  });

  it('counts P1D as 24 hours, also across a clock change', () => {
    const due = next({
      outcome: 'failed',
      failuresSoFar: 1,
      failedAt: '2026-03-07T15:00:00Z',
      timeZone: NY,
      schedule: { failed: ['P1D'] },
    });
    expect(due).toBe('2026-03-08T15:00:00.000Z');
  });

  it('reads weeks, days, hours, minutes and seconds', () => {
    expect(durationMs('P1W')).toBe(7 * 86_400_000);
    expect(durationMs('P1DT2H3M4S')).toBe(86_400_000 + 2 * 3_600_000 + 3 * 60_000 + 4000);
    expect(durationMs('PT90M')).toBe(90 * 60_000);
    for (const bad of ['P', 'PT', 'P1DT', 'P1M', 'P1Y', 'PT1.5H', '-PT1H', 'pt1h', '1H', ''])
      expect(durationMs(bad)).toBeUndefined();
  });
});

describe('refuses what the engine must never pass', () => {
  const base: NextAttemptInput = {
    outcome: 'failed',
    failuresSoFar: 1,
    failedAt: at('2026-01-15T10:00:00Z'),
  };
  it.each<[string, Partial<NextAttemptInput>]>([
    ['no failure yet', { failuresSoFar: 0 }],
    ['a fractional count', { failuresSoFar: 1.5 }],
    ['an invalid date', { failedAt: new Date(Number.NaN) }],
    ['an unknown zone', { timeZone: 'Mars/Olympus' }],
    ['an unknown zone with a schedule', { timeZone: 'Mars/Olympus', schedule: { failed: ['PT1H'] } }],
    ['a delay that is not a duration', { schedule: { failed: ['tomorrow'] } }],
    ['a zero delay', { schedule: { failed: ['PT0S'] } }],
    ['a quiet hour that is not a time', { quietHours: { start: '25:00', end: '08:00' } }],
  ])('%s', (_, change) => {
    expect(() => nextAttemptAt({ ...base, ...change })).toThrow(RangeError);
  });
});
