import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AVS_TEST_DATA, CVC_TEST_DATA, TEST_CARDS } from '../../src/gateway/test-cards.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every sandbox test card', () => {
    const missing = TEST_CARDS.filter((c) => !readme.includes(`\`${c.number}\``)).map((c) => c.number);
    expect(missing).toEqual([]);
  });

  it('lists every CVC test value', () => {
    const missing = CVC_TEST_DATA.filter((c) => !readme.includes(`\`${c.cvc}\``)).map((c) => c.cvc);
    expect(missing).toEqual([]);
  });

  it('names every AVS code the sandbox answers', () => {
    const section = readme.slice(readme.indexOf('AVS/CVC test data'));
    const missing = AVS_TEST_DATA.filter(
      (a) => !section.includes(`${a.addressDigit}/${a.zipDigit} \`${a.code}\``),
    );
    expect(missing).toEqual([]);
  });

  it('documents every configuration variable the service reads', () => {
    const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
    const names = [...source.matchAll(/value\('([A-Z_]+)'\)|int\('([A-Z_]+)'|url\('([A-Z_]+)'/g)].map(
      (m) => m[1] ?? m[2] ?? m[3],
    );
    expect(names.length).toBeGreaterThan(8);
    const missing = [...new Set(names)].filter((n) => !readme.includes(`\`${n}\``));
    expect(missing).toEqual([]);
  });
});
