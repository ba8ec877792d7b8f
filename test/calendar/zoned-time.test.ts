import { describe, expect, it } from 'vitest';
import {
  canonicalTimeZone,
  instantAt,
  instantsAt,
  isTimeZone,
  type WallTime,
  wallTimeAt,
} from '../../src/calendar/zoned-time.js';
import { at, iso } from './local.js';

const wall = (year: number, month: number, day: number, hour: number, minute = 0): WallTime => ({
  year,
  month,
  day,
  hour,
  minute,
  second: 0,
  millisecond: 0,
});

describe('local wall time to instants: one, two in an overlap, none in a gap', () => {
  it.each<[string, string, WallTime, string[], string]>([
    ['an ordinary hour', 'America/New_York', wall(2026, 1, 15, 9), ['2026-01-15T14:00:00.000Z'], ''],
    ['spring-forward gap', 'America/New_York', wall(2026, 3, 8, 2, 30), [], '2026-03-08T07:30:00.000Z'],
    [
      'fall-back overlap',
      'America/New_York',
      wall(2026, 11, 1, 1, 30),
      ['2026-11-01T05:30:00.000Z', '2026-11-01T06:30:00.000Z'],
      '',
    ],
    // Kyiv changes at 03:00 and 04:00 local, so the platform's 03:00 is itself skipped or repeated.
    ['Kyiv gap at 03:00', 'Europe/Kyiv', wall(2026, 3, 29, 3), [], '2026-03-29T01:00:00.000Z'],
    [
      'Kyiv overlap at 03:00',
      'Europe/Kyiv',
      wall(2026, 10, 25, 3),
      ['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z'],
      '',
    ],
    // Lord Howe moves its clocks by half an hour.
    ['half-hour gap', 'Australia/Lord_Howe', wall(2026, 10, 4, 2, 10), [], '2026-10-03T15:40:00.000Z'],
    [
      'half-hour overlap',
      'Australia/Lord_Howe',
      wall(2026, 4, 5, 1, 45),
      ['2026-04-04T14:45:00.000Z', '2026-04-04T15:15:00.000Z'],
      '',
    ],
  ])('%s', (_, zone, w, instants, gapInstant) => {
    expect(instantsAt(w, zone).map(iso)).toEqual(instants);
    // Gap: forward by the gap's length; overlap: the earlier instant.
    expect(iso(instantAt(w, zone))).toBe(instants[0] ?? gapInstant);
  });

  it('rolls a day past the month end over into the next month', () => {
    expect(iso(instantAt(wall(2026, 1, 32, 3), 'Europe/Minsk'))).toBe('2026-02-01T00:00:00.000Z');
  });

  it('reads an instant back as the local clock shows it', () => {
    expect(wallTimeAt(at('2026-11-01T06:30:00.000Z'), 'America/New_York')).toEqual(wall(2026, 11, 1, 1, 30));
    expect(wallTimeAt(at('2026-01-30T22:30:00.000Z'), 'Europe/Minsk')).toEqual(wall(2026, 1, 31, 1, 30));
    expect(() => wallTimeAt(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
    expect(() => wallTimeAt(at('2026-01-01T00:00:00Z'), 'Nowhere/City')).toThrow(RangeError);
  });
});

describe('time zone names', () => {
  it.each([
    ['UTC', 'UTC'],
    ['utc', 'UTC'],
    ['Europe/Minsk', 'Europe/Minsk'],
    ['europe/minsk', 'Europe/Minsk'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['Etc/GMT+3', 'Etc/GMT+3'],
  ])('%s is %s', (name, canonical) => {
    expect(canonicalTimeZone(name)).toBe(canonical);
    expect(isTimeZone(name)).toBe(true);
  });

  it('knows Europe/Kyiv whichever spelling the ICU lists', () => {
    expect(isTimeZone('Europe/Kyiv')).toBe(true);
    expect(isTimeZone('Europe/Kiev')).toBe(true);
  });

  it.each<[unknown]>([
    ['Mars/Olympus'],
    ['+03:00'],
    ['GMT+03:00'],
    [''],
    [' Europe/Minsk'],
    ['Europe/'],
    ['../etc/passwd'],
    [`Europe/${'x'.repeat(80)}`],
    [3],
    [null],
  ])('%j is not one', (name) => {
    expect(isTimeZone(name)).toBe(false);
  });
});
