import { describe, expect, it } from 'vitest';
import { isId, newId, randomToken, secureRandomBytes } from '../../src/ids.js';

describe('random ids and tokens', () => {
  it('never hand out the same bytes twice, across refills of the pool', () => {
    const seen = new Set<string>();
    // 16-byte draws across many 4 KiB refills; a repeat would mean a byte range was reused.
    for (let i = 0; i < 5000; i++) seen.add(secureRandomBytes(16).toString('hex'));
    expect(seen.size).toBe(5000);
    expect(secureRandomBytes(10_000)).toHaveLength(10_000);
  });

  it('are base62 of the asked length, and ids carry their prefix', () => {
    const tokens = Array.from({ length: 2000 }, () => randomToken(64));
    for (const t of tokens) expect(t).toMatch(/^[0-9A-Za-z]{64}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
    const id = newId('sbs');
    expect(isId('sbs', id)).toBe(true);
    expect(isId('cst', id)).toBe(false);
  });

  it('use every base62 character about equally often', () => {
    const counts = new Map<string, number>();
    for (const ch of randomToken(62 * 2000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(1600);
  });
});
