import { describe, expect, it } from 'vitest';
import {
  afterQuietHours,
  type NextAttemptInput,
  nextAttemptAt,
  type QuietHours,
} from '../../src/calendar/retry-schedule.js';
import { at, iso } from './local.js';

const NY = 'America/New_York';
const next = (input: Omit<NextAttemptInput, 'failedAt'> & { failedAt: string }) =>
  iso(nextAttemptAt({ ...input, failedAt: at(input.failedAt) }));

describe('quiet hours: an attempt inside them waits for their end, local time', () => {
  const night: QuietHours = { start: '20:00', end: '08:00' };
  const lunch: QuietHours = { start: '12:00', end: '14:00' };

  it.each<[string, QuietHours, string, string]>([
    ['crossing midnight, evening', night, '2026-01-15T20:30:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['crossing midnight, at the start', night, '2026-01-15T20:00:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['crossing midnight, morning', night, '2026-01-16T07:00:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['crossing midnight, at the end', night, '2026-01-16T08:00:00.000Z', '2026-01-16T08:00:00.000Z'],
    ['crossing midnight, outside', night, '2026-01-16T19:59:00.000Z', '2026-01-16T19:59:00.000Z'],
    ['same day, inside', lunch, '2026-01-16T12:00:00.000Z', '2026-01-16T14:00:00.000Z'],
    ['same day, last minute', lunch, '2026-01-16T13:59:59.000Z', '2026-01-16T14:00:00.000Z'],
    ['same day, at the end', lunch, '2026-01-16T14:00:00.000Z', '2026-01-16T14:00:00.000Z'],
    ['same day, before', lunch, '2026-01-16T11:59:00.000Z', '2026-01-16T11:59:00.000Z'],
  ])('%s', (_, quiet, due, expected) => {
    expect(iso(afterQuietHours(at(due), quiet))).toBe(expected);
  });

  it('moves the 03:00 retry to the end of the night in the shop zone', () => {
    const due = next({
      outcome: 'failed',
      failuresSoFar: 1,
      failedAt: '2026-01-15T10:00:00Z',
      timeZone: 'Europe/Minsk',
      quietHours: night,
    });
    expect(due).toBe('2026-01-16T05:00:00.000Z');
    const hourly = next({
      outcome: 'error',
      failuresSoFar: 1,
      failedAt: '2026-01-15T19:30:00Z',
      quietHours: night,
    });
    expect(hourly).toBe('2026-01-16T08:00:00.000Z');
  });

  it.each<[string, QuietHours, string, string]>([
    // The night before spring forward has 9 hours of clock time but 8 real hours.
    [
      'night into spring forward',
      { start: '22:00', end: '07:00' },
      '2026-03-08T04:00:00Z',
      '2026-03-08T11:00:00.000Z',
    ],
    // An end the clocks skip is read with the gap rule: 02:30 is 03:30 summer time.
    [
      'end inside the gap',
      { start: '00:00', end: '02:30' },
      '2026-03-08T06:30:00Z',
      '2026-03-08T07:30:00.000Z',
    ],
    [
      'night into fall back',
      { start: '22:00', end: '07:00' },
      '2026-11-01T03:00:00Z',
      '2026-11-01T12:00:00.000Z',
    ],
    // 01:10 comes twice: each waits for the 01:30 that follows it.
    [
      'first 01:10, end repeated',
      { start: '20:00', end: '01:30' },
      '2026-11-01T05:10:00Z',
      '2026-11-01T05:30:00.000Z',
    ],
    [
      'second 01:10, end repeated',
      { start: '20:00', end: '01:30' },
      '2026-11-01T06:10:00Z',
      '2026-11-01T06:30:00.000Z',
    ],
  ])('in New York: %s', (_, quiet, due, expected) => {
    expect(iso(afterQuietHours(at(due), quiet, NY))).toBe(expected);
  });
});
