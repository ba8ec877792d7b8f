import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SRC, sourceFiles } from './sources.js';

/**
 * One writer per table (redesign plan B.4): a subscription's row is written only by
 * src/subscriptions/state.ts, which applies what the pure transition table decided, and a charge
 * attempt's row only by src/charging/repository.ts. A write anywhere else could change a state the
 * table did not decide, so this reads src/ and names every statement found outside its owner.
 * Test fixtures under test/ may still write rows directly; migrations are history, not writers.
 */

const RULES = [
  {
    table: 'subscriptions',
    owner: 'src/subscriptions/state.ts',
    write: /\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+subscriptions\b/gi,
  },
  {
    table: 'subscription_charges',
    owner: 'src/charging/repository.ts',
    write: /\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM)\s+subscription_charges\b/gi,
  },
] as const;

const files = sourceFiles(SRC).map((path) => ({
  path: relative(ROOT, path).split('\\').join('/'),
  text: readFileSync(path, 'utf8'),
}));

/** Each write of `table` in src/, as "file:line: statement". */
function writesOf(rule: (typeof RULES)[number]): { file: string; where: string }[] {
  return files.flatMap(({ path, text }) =>
    [...text.matchAll(rule.write)].map((m) => {
      const line = text.slice(0, m.index).split('\n').length;
      return { file: path, where: `${path}:${line}: ${m[0]}` };
    }),
  );
}

describe('one writer per table', () => {
  it('reads the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  for (const rule of RULES) {
    it(`only ${rule.owner} writes ${rule.table}`, () => {
      const writes = writesOf(rule);
      expect(writes.filter((w) => w.file !== rule.owner).map((w) => w.where)).toEqual([]);
      // The owner itself writes the table: a rule that matched nothing would prove nothing.
      expect(writes.some((w) => w.file === rule.owner)).toBe(true);
    });
  }
});
