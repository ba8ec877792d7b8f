import { describe, expect, it } from 'vitest';
import { nextAttemptAt } from '../../src/calendar/retry-schedule.js';
import { parseQuietHours, parseRetrySchedule, parseTimeZone } from '../../src/calendar/retry-settings.js';

const DELAYS = 'must be a list of ISO 8601 durations such as PT1H or P1D';

describe('parseTimeZone', () => {
  it.each([
    ['UTC', 'UTC'],
    ['Europe/Minsk', 'Europe/Minsk'],
    [' america/new_york ', 'America/New_York'],
  ])('%j is %s', (value, zone) => {
    expect(parseTimeZone(value)).toEqual({ ok: true, value: zone });
  });

  it.each<[unknown]>([['Mars/Olympus'], ['+03:00'], [''], [null], [3], [{}]])('%j is refused', (value) => {
    expect(parseTimeZone(value)).toEqual({
      ok: false,
      errors: ['is not an IANA time zone such as Europe/Minsk or UTC'],
    });
  });
});

describe('parseRetrySchedule: good input', () => {
  it.each<[string, unknown, unknown]>([
    ['null is the platform rule', null, null],
    ['undefined is the platform rule', undefined, null],
    ['neither list is the platform rule', {}, null],
    ['null lists are the platform rule', { failed: null, error: null }, null],
    ['a failed list', { failed: ['PT1H', 'P1D', 'P3D'] }, { failed: ['PT1H', 'P1D', 'P3D'] }],
    ['both lists', { failed: ['P1D'], error: ['PT5M'] }, { failed: ['P1D'], error: ['PT5M'] }],
    ['a bare list serves both', ['PT1H', 'P1D'], { failed: ['PT1H', 'P1D'], error: ['PT1H', 'P1D'] }],
    ['trimmed and upper-cased', { error: [' pt1h ', 'p1dt12h'] }, { error: ['PT1H', 'P1DT12H'] }],
    [
      'the bounds',
      { failed: ['PT1M', 'P30D', 'PT60S', 'P4W2D', 'PT720H'] },
      { failed: ['PT1M', 'P30D', 'PT60S', 'P4W2D', 'PT720H'] },
    ],
    ['unknown members ignored', { failed: ['P1D'], note: 'x' }, { failed: ['P1D'] }],
    ['twenty delays', { failed: Array(20).fill('PT1H') }, { failed: Array(20).fill('PT1H') }],
  ])('%s', (_, value, expected) => {
    expect(parseRetrySchedule(value)).toEqual({ ok: true, value: expected });
  });

  it('answers a schedule nextAttemptAt takes as it is', () => {
    const parsed = parseRetrySchedule({ failed: ['pt2h'] });
    if (!parsed.ok) throw new Error('refused');
    const due = nextAttemptAt({
      outcome: 'failed',
      failuresSoFar: 1,
      failedAt: new Date('2026-01-15T10:00:00Z'),
      schedule: parsed.value,
    });
    expect(due.toISOString()).toBe('2026-01-15T12:00:00.000Z');
  });
});

describe('parseRetrySchedule: bad input', () => {
  it.each<[string, unknown, string[]]>([
    ['a string', 'P1D', ['must be an object such as {"failed": ["P1D", "P3D"], "error": ["PT1H"]}']],
    ['a number', 3, ['must be an object such as {"failed": ["P1D", "P3D"], "error": ["PT1H"]}']],
    ['a list that is not one', { failed: 'P1D' }, [`failed ${DELAYS}`]],
    ['numbers', { error: [3600] }, [`error ${DELAYS}`]],
    ['not durations', { failed: ['1 day', 'tomorrow', 'P1D'] }, [`failed ${DELAYS}`]],
    ['months and years', { failed: ['P1M'], error: ['P1Y'] }, [`failed ${DELAYS}`, `error ${DELAYS}`]],
    ['fractions', { failed: ['PT1.5H'] }, [`failed ${DELAYS}`]],
    ['negative', { failed: ['-PT1H'] }, [`failed ${DELAYS}`]],
    ['a long string', { failed: [`PT${'1'.repeat(60)}H`] }, [`failed ${DELAYS}`]],
    ['empty list', { failed: [] }, ['failed must have 1 to 20 delays']],
    ['too many', { error: Array(21).fill('PT1H') }, ['error must have 1 to 20 delays']],
    ['a bare empty list', [], ['must have 1 to 20 delays']],
    ['a bare list with junk', ['PT1H', null], [DELAYS]],
    [
      'out of range',
      { failed: ['PT30S', 'P1D', 'P31D'], error: ['PT0S'] },
      [
        'failed delay PT30S must be between PT1M and P30D',
        'failed delay P31D must be between PT1M and P30D',
        'error delay PT0S must be between PT1M and P30D',
      ],
    ],
  ])('%s', (_, value, errors) => {
    expect(parseRetrySchedule(value)).toEqual({ ok: false, errors });
  });
});

describe('parseQuietHours', () => {
  it.each<[unknown, unknown]>([
    [null, null],
    [undefined, null],
    [
      { start: '20:00', end: '08:00' },
      { start: '20:00', end: '08:00' },
    ],
    [
      { start: '12:00', end: '14:30' },
      { start: '12:00', end: '14:30' },
    ],
    [
      { start: '8:00', end: ' 23:59 ' },
      { start: '08:00', end: '23:59' },
    ],
    [
      { start: '00:00', end: '06:00', extra: 1 },
      { start: '00:00', end: '06:00' },
    ],
  ])('%j is %j', (value, expected) => {
    expect(parseQuietHours(value)).toEqual({ ok: true, value: expected });
  });

  const START = 'start must be a time of day such as 20:00';
  const END = 'end must be a time of day such as 08:00';
  it.each<[unknown, string[]]>([
    ['20:00-08:00', ['must be an object such as {"start": "20:00", "end": "08:00"}']],
    [['20:00', '08:00'], ['must be an object such as {"start": "20:00", "end": "08:00"}']],
    [{}, [START, END]],
    [{ start: '24:00', end: '08:00' }, [START]],
    [{ start: '20:00', end: '8' }, [END]],
    [{ start: '20:60', end: '08:00:00' }, [START, END]],
    [{ start: 2000, end: '08:00' }, [START]],
    [{ start: '20:00', end: '20:00' }, ['end must differ from start']],
    [{ start: '8:00', end: '08:00' }, ['end must differ from start']],
  ])('%j is refused', (value, errors) => {
    expect(parseQuietHours(value)).toEqual({ ok: false, errors });
  });
});
