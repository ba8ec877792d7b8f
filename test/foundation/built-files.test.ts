import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './kopek-process.js';

/**
 * `npm run build` bundles the program into dist/ (scripts/build.mjs): a module's own URL there is the
 * bundle's, not its source file's. So the files that ship beside the code are found from one place,
 * src/code-root.ts, and the build must copy each of them to the same path under dist/ (the tests'
 * set-up has built dist/ by now).
 */

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

const SRC = join(ROOT, 'src');

describe('the files that ship beside the built program', () => {
  it('are found from src/code-root.ts only, never from a module’s own URL', () => {
    const own = sources(SRC)
      .filter((file) => /import\.meta\.(url|dirname|filename)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    expect(own).toEqual(['code-root.ts']);
  });

  it('are each where the built program looks for them', () => {
    const wanted = sources(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/new URL\('([^']+)', CODE_ROOT\)/g)].map((m) => m[1] as string),
    );
    // The migrations, the pages' assets and the signing thread.
    expect(wanted.length).toBeGreaterThanOrEqual(3);
    for (const path of wanted) {
      expect(existsSync(join(SRC, path)), `src/${path}`).toBe(true);
      expect(existsSync(join(ROOT, 'dist', path)), `dist/${path}`).toBe(true);
    }
    expect(readdirSync(join(ROOT, 'dist', 'db', 'migrations'))).toEqual(
      readdirSync(join(SRC, 'db', 'migrations')),
    );
  });
});
