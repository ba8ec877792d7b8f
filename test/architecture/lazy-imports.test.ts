import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SRC, sourceFiles } from './sources.js';

/**
 * Libraries only some processes use are loaded when first used, not with the server: SMTP
 * (nodemailer, only with SMTP_URL and an e-mail to send), Redis (ioredis, only with REDIS_URL) and
 * the embedded store (PGlite, only without DATABASE_URL). Each costs memory in every process that
 * loads it (docs/performance.md, Memory). So src/ names them in a static import only as types; the
 * one module that imports PGlite itself (src/db/pglite.ts) is in turn imported only with import().
 */

const files = sourceFiles(SRC).map((path) => ({
  path: relative(ROOT, path).split('\\').join('/'),
  text: readFileSync(path, 'utf8'),
}));

/** Static imports (and re-exports) of `from`, type-only ones left out, as "file:line". */
function staticImports(from: RegExp): string[] {
  const statement = /^\s*(import|export)\s+(type\s+)?[^;]*?\sfrom\s+['"]([^'"]+)['"]/gm;
  return files.flatMap(({ path, text }) =>
    [...text.matchAll(statement)]
      .filter((m) => m[2] === undefined && from.test(m[3] ?? ''))
      .map((m) => `${path}:${text.slice(0, m.index).split('\n').length}`),
  );
}

describe('libraries loaded when first used', () => {
  it('reads the source tree', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('imports nodemailer and ioredis statically only as types', () => {
    expect(staticImports(/^(nodemailer|ioredis)$/)).toEqual([]);
  });

  it('imports PGlite statically only in src/db/pglite.ts, which is imported only with import()', () => {
    expect(staticImports(/^@electric-sql\/pglite$/)).toEqual([
      expect.stringMatching(/^src\/db\/pglite\.ts:/),
    ]);
    expect(staticImports(/\/db\/pglite\.js$|^\.\/pglite\.js$/)).toEqual([]);
  });
});
