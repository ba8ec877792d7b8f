import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every way of starting Kopek (`npm start`, bin/kopek.js run as `npx kopek`, the Dockerfile) runs it
 * with the same Node flags, those that bound its memory (docs/performance.md, Memory): V8's default
 * young generation, the old generation collected once it has grown by half of what was live, and
 * V8's gc exposed for the collection a quiet process runs (src/compose/idle-memory.ts).
 */

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const WANTED = ['--max-semi-space-size=16', '--heap-growing-percent=50', '--expose-gc'];

describe('the Node flags Kopek runs with', () => {
  it('npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe(`exec node ${WANTED.join(' ')} bin/kopek.js serve`);
  });

  it('bin/kopek.js (npx kopek)', () => {
    expect(read('bin/kopek.js').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${WANTED.join(' ')}`);
  });

  it('the Dockerfile (its entrypoint is the kopek command; its command, serve)', () => {
    const line = (op: string) =>
      read('Dockerfile')
        .split('\n')
        .find((l) => l.startsWith(`${op} `));
    const exec = (words: string[]) => JSON.stringify(words).replace(/","/g, '", "');
    expect(line('ENTRYPOINT')).toBe(`ENTRYPOINT ${exec(['node', ...WANTED, 'bin/kopek.js'])}`);
    expect(line('CMD')).toBe(`CMD ${exec(['serve'])}`);
  });
});
