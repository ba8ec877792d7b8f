import { describe, expect, it } from 'vitest';
import { isoString } from '../../src/clock.js';

describe('isoString', () => {
  it('formats exactly as toISOString, whichever instants come in whatever order', () => {
    const instants = [0, 1, 1_767_225_600_000, 1_767_225_600_001, -62_135_596_800_000, 253_402_300_799_999];
    for (const a of instants) {
      for (const b of instants) {
        expect(isoString(new Date(a))).toBe(new Date(a).toISOString());
        // The same instant again, as another object, and then a different one.
        expect(isoString(new Date(a))).toBe(new Date(a).toISOString());
        expect(isoString(new Date(b))).toBe(new Date(b).toISOString());
      }
    }
  });

  it('follows a date changed in place after it was formatted', () => {
    const d = new Date('2026-01-31T10:00:00.000Z');
    expect(isoString(d)).toBe('2026-01-31T10:00:00.000Z');
    d.setUTCDate(1);
    expect(isoString(d)).toBe('2026-01-01T10:00:00.000Z');
  });

  it('refuses an invalid date as toISOString does', () => {
    expect(() => isoString(new Date(Number.NaN))).toThrow(RangeError);
  });
});
