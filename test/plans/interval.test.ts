import { describe, expect, it } from 'vitest';
import {
  addInterval,
  daysInMonth,
  type IntervalUnit,
  isIntervalUnit,
  nthPeriodEnd,
} from '../../src/calendar/interval.js';

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString();

describe('addInterval: hour, day and week are fixed lengths in UTC', () => {
  it.each<[string, number, IntervalUnit, string]>([
    ['2026-01-15T10:00:00.000Z', 1, 'hour', '2026-01-15T11:00:00.000Z'],
    ['2026-01-15T23:30:00.000Z', 1, 'hour', '2026-01-16T00:30:00.000Z'],
    ['2026-12-31T23:00:00.000Z', 2, 'hour', '2027-01-01T01:00:00.000Z'],
    ['2026-01-15T10:00:00.000Z', 48, 'hour', '2026-01-17T10:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 1, 'day', '2026-02-01T10:00:00.000Z'],
    ['2024-02-28T00:00:00.000Z', 1, 'day', '2024-02-29T00:00:00.000Z'],
    ['2025-02-28T00:00:00.000Z', 1, 'day', '2025-03-01T00:00:00.000Z'],
    ['2026-12-31T12:00:00.000Z', 1, 'day', '2027-01-01T12:00:00.000Z'],
    // Europe switches to summer time on 2026-03-29; UTC does not, so a day stays 24 hours.
    ['2026-03-28T12:00:00.000Z', 1, 'day', '2026-03-29T12:00:00.000Z'],
    ['2026-01-15T10:00:00.000Z', 30, 'day', '2026-02-14T10:00:00.000Z'],
    ['2026-12-28T08:00:00.000Z', 1, 'week', '2027-01-04T08:00:00.000Z'],
    ['2024-02-26T08:00:00.000Z', 1, 'week', '2024-03-04T08:00:00.000Z'],
    ['2026-01-01T00:00:00.000Z', 52, 'week', '2026-12-31T00:00:00.000Z'],
    ['2026-01-15T10:00:00.000Z', 0, 'day', '2026-01-15T10:00:00.000Z'],
  ])('%s + %i %s = %s', (from, count, unit, expected) => {
    expect(iso(addInterval(at(from), count, unit))).toBe(expected);
  });
});

describe('addInterval: month and year keep the anchor day, clamped to the month end', () => {
  it.each<[string, number, IntervalUnit, number | undefined, string]>([
    ['2026-01-15T10:00:00.000Z', 1, 'month', undefined, '2026-02-15T10:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 1, 'month', undefined, '2026-02-28T10:00:00.000Z'],
    ['2024-01-31T10:00:00.000Z', 1, 'month', undefined, '2024-02-29T10:00:00.000Z'],
    ['2026-03-31T10:00:00.000Z', 1, 'month', undefined, '2026-04-30T10:00:00.000Z'],
    ['2026-12-15T10:00:00.000Z', 1, 'month', undefined, '2027-01-15T10:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', 2, 'month', undefined, '2027-02-28T23:59:59.999Z'],
    ['2026-11-30T00:00:00.000Z', 3, 'month', undefined, '2027-02-28T00:00:00.000Z'],
    ['2026-01-31T10:00:00.000Z', 13, 'month', undefined, '2027-02-28T10:00:00.000Z'],
    ['2026-05-31T10:00:00.000Z', 12, 'month', undefined, '2027-05-31T10:00:00.000Z'],
    // With an anchor day, a date already clamped to Feb 28 goes back to the 31st.
    ['2026-02-28T10:00:00.000Z', 1, 'month', 31, '2026-03-31T10:00:00.000Z'],
    ['2026-02-28T10:00:00.000Z', 2, 'month', 31, '2026-04-30T10:00:00.000Z'],
    ['2026-02-28T10:00:00.000Z', 1, 'month', 30, '2026-03-30T10:00:00.000Z'],
    ['2026-04-30T10:00:00.000Z', 1, 'month', 29, '2026-05-29T10:00:00.000Z'],
    ['2024-02-29T12:00:00.000Z', 1, 'year', undefined, '2025-02-28T12:00:00.000Z'],
    ['2024-02-29T12:00:00.000Z', 4, 'year', undefined, '2028-02-29T12:00:00.000Z'],
    ['2025-02-28T12:00:00.000Z', 3, 'year', 29, '2028-02-29T12:00:00.000Z'],
    ['2026-12-31T00:00:00.000Z', 1, 'year', undefined, '2027-12-31T00:00:00.000Z'],
    // 2100 is not a leap year (divisible by 100, not by 400); 2000 was.
    ['2096-02-29T00:00:00.000Z', 4, 'year', undefined, '2100-02-28T00:00:00.000Z'],
    ['1996-02-29T00:00:00.000Z', 4, 'year', undefined, '2000-02-29T00:00:00.000Z'],
    ['2026-03-31T10:00:00.000Z', -1, 'month', undefined, '2026-02-28T10:00:00.000Z'],
  ])('%s + %i %s (anchor %s) = %s', (from, count, unit, anchorDay, expected) => {
    expect(iso(addInterval(at(from), count, unit, anchorDay))).toBe(expected);
  });

  it('does not change its argument', () => {
    const from = at('2026-01-31T10:00:00.000Z');
    addInterval(from, 1, 'month');
    expect(iso(from)).toBe('2026-01-31T10:00:00.000Z');
  });

  it('refuses a fractional count, a bad anchor day and an invalid date', () => {
    expect(() => addInterval(at('2026-01-01T00:00:00Z'), 1.5, 'day')).toThrow(RangeError);
    expect(() => addInterval(at('2026-01-01T00:00:00Z'), 1, 'month', 0)).toThrow(RangeError);
    expect(() => addInterval(at('2026-01-01T00:00:00Z'), 1, 'month', 32)).toThrow(RangeError);
    expect(() => addInterval(new Date(Number.NaN), 1, 'day')).toThrow(RangeError);
  });
});

describe('nthPeriodEnd: every period end is computed from the anchor, so nothing drifts', () => {
  it('follows Jan 31 → Feb 28 → Mar 31 → Apr 30 (decisions.md)', () => {
    const anchor = at('2026-01-31T09:15:00.000Z');
    const ends = [0, 1, 2, 3, 4, 11, 12].map((n) => iso(nthPeriodEnd(anchor, n, 1, 'month')));
    expect(ends).toEqual([
      '2026-01-31T09:15:00.000Z',
      '2026-02-28T09:15:00.000Z',
      '2026-03-31T09:15:00.000Z',
      '2026-04-30T09:15:00.000Z',
      '2026-05-31T09:15:00.000Z',
      '2026-12-31T09:15:00.000Z',
      '2027-01-31T09:15:00.000Z',
    ]);
  });

  it('gives Feb 29 in a leap year', () => {
    expect(iso(nthPeriodEnd(at('2024-01-31T00:00:00.000Z'), 1, 1, 'month'))).toBe('2024-02-29T00:00:00.000Z');
    expect(iso(nthPeriodEnd(at('2023-12-31T00:00:00.000Z'), 2, 1, 'month'))).toBe('2024-02-29T00:00:00.000Z');
  });

  it('differs from stepping from the previous end, which would drift to the 28th', () => {
    const anchor = at('2026-01-31T00:00:00.000Z');
    let stepped = anchor;
    for (let n = 1; n <= 3; n++) stepped = addInterval(stepped, 1, 'month');
    expect(iso(stepped)).toBe('2026-04-28T00:00:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 3, 1, 'month'))).toBe('2026-04-30T00:00:00.000Z');
  });

  it('multiplies the interval: every 3 months from Nov 30', () => {
    const anchor = at('2025-11-30T00:00:00.000Z');
    const ends = [1, 2, 3, 4].map((n) => iso(nthPeriodEnd(anchor, n, 3, 'month')));
    expect(ends).toEqual([
      '2026-02-28T00:00:00.000Z',
      '2026-05-30T00:00:00.000Z',
      '2026-08-30T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ]);
  });

  it('keeps Feb 29 for yearly plans in leap years only', () => {
    const anchor = at('2024-02-29T06:00:00.000Z');
    const ends = [1, 2, 3, 4, 8].map((n) => iso(nthPeriodEnd(anchor, n, 1, 'year')));
    expect(ends).toEqual([
      '2025-02-28T06:00:00.000Z',
      '2026-02-28T06:00:00.000Z',
      '2027-02-28T06:00:00.000Z',
      '2028-02-29T06:00:00.000Z',
      '2032-02-29T06:00:00.000Z',
    ]);
  });

  it('counts hours, days and weeks exactly', () => {
    const anchor = at('2026-12-31T22:00:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 3, 1, 'hour'))).toBe('2027-01-01T01:00:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 2, 7, 'day'))).toBe('2027-01-14T22:00:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 2, 2, 'week'))).toBe('2027-01-28T22:00:00.000Z');
  });

  it('refuses a negative period number and an interval below 1', () => {
    const anchor = at('2026-01-01T00:00:00.000Z');
    expect(() => nthPeriodEnd(anchor, -1, 1, 'month')).toThrow(RangeError);
    expect(() => nthPeriodEnd(anchor, 1, 0, 'month')).toThrow(RangeError);
  });
});

describe('helpers', () => {
  it('knows the days of each month', () => {
    expect([2023, 2024, 2100, 2000].map((y) => daysInMonth(y, 1))).toEqual([28, 29, 28, 29]);
    expect(daysInMonth(2026, 0)).toBe(31);
    expect(daysInMonth(2026, 3)).toBe(30);
    expect(daysInMonth(2026, 11)).toBe(31);
  });

  it('recognises the interval units', () => {
    expect(['hour', 'day', 'week', 'month', 'year'].every(isIntervalUnit)).toBe(true);
    expect(['minute', 'Month', '', 1, null].some(isIntervalUnit)).toBe(false);
  });
});
