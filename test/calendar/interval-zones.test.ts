import { describe, expect, it } from 'vitest';
import {
  addInterval,
  type IntervalUnit,
  localDayOfMonth,
  nthPeriodEnd,
} from '../../src/calendar/interval.js';
import { at, iso, local } from './local.js';

const NY = 'America/New_York';
const MINSK = 'Europe/Minsk';
const months = (anchor: Date, zone?: string) =>
  Array.from({ length: 13 }, (_, n) => nthPeriodEnd(anchor, n, 1, 'month', zone));

describe('a year of monthly billing from Jan 31: clamped, then back to the 31st', () => {
  const days = ['01-31', '02-28', '03-31', '04-30', '05-31', '06-30', '07-31', '08-31', '09-30', '10-31'];
  const localDays = [...days.map((d) => `2026-${d}`), '2026-11-30', '2026-12-31', '2027-01-31'];

  it('in UTC', () => {
    const ends = months(at('2026-01-31T09:15:00.000Z')).map(iso);
    expect(ends).toEqual(localDays.map((d) => `${d}T09:15:00.000Z`));
  });

  it('in Europe/Minsk, where 01:30 on the 31st is still the 30th in UTC', () => {
    const ends = months(at('2026-01-30T22:30:00.000Z'), MINSK);
    expect(ends.map((d) => local(d, MINSK))).toEqual(localDays.map((d) => `${d} 01:30`));
    expect(iso(ends[1]!)).toBe('2026-02-27T22:30:00.000Z');
  });

  it('in America/New_York, at 20:00 local through both clock changes', () => {
    const ends = months(at('2026-02-01T01:00:00.000Z'), NY);
    expect(ends.map((d) => local(d, NY))).toEqual(localDays.map((d) => `${d} 20:00`));
    expect(ends.map(iso)).toEqual([
      '2026-02-01T01:00:00.000Z',
      '2026-03-01T01:00:00.000Z',
      '2026-04-01T00:00:00.000Z', // summer time from Mar 8: 20:00 is an hour earlier in UTC
      '2026-05-01T00:00:00.000Z',
      '2026-06-01T00:00:00.000Z',
      '2026-07-01T00:00:00.000Z',
      '2026-08-01T00:00:00.000Z',
      '2026-09-01T00:00:00.000Z',
      '2026-10-01T00:00:00.000Z',
      '2026-11-01T00:00:00.000Z',
      '2026-12-01T01:00:00.000Z', // winter time again from Nov 1
      '2027-01-01T01:00:00.000Z',
      '2027-02-01T01:00:00.000Z',
    ]);
  });

  it('the Minsk example: 2026-01-31 22:30 local + 1 month = 2026-02-28 22:30 local', () => {
    const end = addInterval(at('2026-01-31T19:30:00.000Z'), 1, 'month', undefined, MINSK);
    expect(local(end, MINSK)).toBe('2026-02-28 22:30');
  });
});

describe('yearly from Feb 29', () => {
  const expected = ['2028-02-29', '2029-02-28', '2030-02-28', '2031-02-28', '2032-02-29'];
  const years = (anchor: Date, zone?: string) =>
    [0, 1, 2, 3, 4].map((n) => nthPeriodEnd(anchor, n, 1, 'year', zone));

  it('in UTC', () => {
    expect(years(at('2028-02-29T06:00:00.000Z')).map(iso)).toEqual(expected.map((d) => `${d}T06:00:00.000Z`));
  });

  it('in Europe/Minsk, where 00:30 on Feb 29 is Feb 28 in UTC', () => {
    const ends = years(at('2028-02-28T21:30:00.000Z'), MINSK);
    expect(ends.map((d) => local(d, MINSK))).toEqual(expected.map((d) => `${d} 00:30`));
  });
});

describe('hourly across a clock change in America/New_York: exactly 3600 s, no gaps, no repeats', () => {
  it.each([
    ['spring forward', '2026-03-08T04:00:00.000Z'],
    ['fall back', '2026-11-01T03:00:00.000Z'],
  ])('%s', (_, anchorIso) => {
    const anchor = at(anchorIso);
    const ends = Array.from({ length: 48 }, (_, n) => nthPeriodEnd(anchor, n, 1, 'hour', NY));
    for (let n = 1; n < ends.length; n++) expect(ends[n]!.getTime() - ends[n - 1]!.getTime()).toBe(3_600_000);
    expect(new Set(ends.map(iso)).size).toBe(48);
  });

  it('the local clock skips 02:00 in spring and shows 01:00 twice in autumn', () => {
    const spring = [0, 1, 2, 3].map((n) =>
      local(nthPeriodEnd(at('2026-03-08T05:00:00Z'), n, 1, 'hour', NY), NY),
    );
    expect(spring).toEqual(['2026-03-08 00:00', '2026-03-08 01:00', '2026-03-08 03:00', '2026-03-08 04:00']);
    const autumn = [0, 1, 2, 3].map((n) =>
      local(nthPeriodEnd(at('2026-11-01T04:00:00Z'), n, 1, 'hour', NY), NY),
    );
    expect(autumn).toEqual(['2026-11-01 00:00', '2026-11-01 01:00', '2026-11-01 01:00', '2026-11-01 02:00']);
  });
});

describe('local time of day across a clock change', () => {
  it('a day plan is 24 hours, so its local time moves by the change', () => {
    const end = addInterval(at('2026-03-07T15:00:00.000Z'), 1, 'day', undefined, NY);
    expect(iso(end)).toBe('2026-03-08T15:00:00.000Z');
    expect(local(end, NY)).toBe('2026-03-08 11:00');
    expect(iso(addInterval(at('2026-03-07T15:00:00.000Z'), 1, 'week', undefined, NY))).toBe(
      '2026-03-14T15:00:00.000Z',
    );
  });

  it('monthly at 02:30: the skipped 02:30 is 03:30, and the month after is 02:30 again', () => {
    const ends = [0, 1, 2, 3].map((n) => nthPeriodEnd(at('2026-02-08T07:30:00.000Z'), n, 1, 'month', NY));
    expect(ends.map((d) => local(d, NY))).toEqual([
      '2026-02-08 02:30',
      '2026-03-08 03:30',
      '2026-04-08 02:30',
      '2026-05-08 02:30',
    ]);
    expect(ends.map(iso)).toEqual([
      '2026-02-08T07:30:00.000Z',
      '2026-03-08T07:30:00.000Z',
      '2026-04-08T06:30:00.000Z',
      '2026-05-08T06:30:00.000Z',
    ]);
  });

  it('monthly at 01:30: the repeated 01:30 is the first one, still in summer time', () => {
    const ends = [1, 2].map((n) => nthPeriodEnd(at('2026-10-01T05:30:00.000Z'), n, 1, 'month', NY));
    expect(ends.map(iso)).toEqual(['2026-11-01T05:30:00.000Z', '2026-12-01T06:30:00.000Z']);
  });

  it('an anchor at the second 01:30 stays itself and goes on at 01:30', () => {
    const anchor = at('2026-11-01T06:30:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 0, 1, 'month', NY))).toBe('2026-11-01T06:30:00.000Z');
    expect(iso(addInterval(anchor, 0, 'month', 1, NY))).toBe('2026-11-01T06:30:00.000Z');
    expect(iso(nthPeriodEnd(anchor, 1, 1, 'month', NY))).toBe('2026-12-01T06:30:00.000Z');
  });

  it('the anchor day is the local day: billing_day 31 from a clamped Feb 28 in Minsk', () => {
    const feb28 = at('2026-02-27T22:30:00.000Z');
    expect(local(addInterval(feb28, 1, 'month', 31, MINSK), MINSK)).toBe('2026-03-31 01:30');
    expect(localDayOfMonth(feb28, MINSK)).toBe(28);
    expect(localDayOfMonth(feb28)).toBe(27);
  });
});

describe('UTC stays as it was', () => {
  // Etc/UTC takes the zoned path; UTC and no zone take the original one: all must agree.
  it.each<[string, number, IntervalUnit, number | undefined]>([
    ['2026-01-31T10:00:00.000Z', 1, 'month', undefined],
    ['2024-01-31T23:59:59.999Z', 1, 'month', undefined],
    ['2026-02-28T10:00:00.000Z', 2, 'month', 31],
    ['2026-03-31T10:00:00.000Z', -1, 'month', undefined],
    ['2096-02-29T00:00:00.000Z', 4, 'year', undefined],
    ['2025-02-28T12:00:00.000Z', 3, 'year', 29],
    ['2026-01-15T10:00:00.000Z', 30, 'day', undefined],
    ['2026-12-31T23:00:00.000Z', 2, 'hour', undefined],
  ])('%s + %i %s (anchor %s)', (from, count, unit, anchorDay) => {
    const plain = iso(addInterval(at(from), count, unit, anchorDay));
    expect(iso(addInterval(at(from), count, unit, anchorDay, 'UTC'))).toBe(plain);
    expect(iso(addInterval(at(from), count, unit, anchorDay, 'Etc/UTC'))).toBe(plain);
  });

  it('refuses an unknown time zone for every unit', () => {
    for (const unit of ['hour', 'month'] as const) {
      expect(() => addInterval(at('2026-01-01T00:00:00Z'), 1, unit, undefined, 'Mars/Olympus')).toThrow(
        RangeError,
      );
    }
    expect(() => nthPeriodEnd(at('2026-01-01T00:00:00Z'), 1, 1, 'month', '+03:00')).toThrow(RangeError);
  });
});
