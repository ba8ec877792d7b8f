import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './kopek-process.js';

/**
 * npm 11 runs a dependency's install scripts only when package.json's `allowScripts` reviews them,
 * and otherwise ends every `npm install` / `npm ci` with a warning listing them. Every package of the
 * lock file that has an install script is reviewed there (allowed or denied), so a fresh install
 * prints no warning; and nothing is reviewed that the lock file no longer installs with a script.
 */

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};

/** `node_modules/a/node_modules/@b/c` → `@b/c`. */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('the install scripts of the dependencies', () => {
  const withScripts = [
    ...new Set(
      Object.entries(lock.packages)
        .filter(([path, pkg]) => path !== '' && pkg.hasInstallScript)
        .map(([path]) => nameOf(path)),
    ),
  ].sort();
  // Entries are a name or a name@version.
  const reviewed = Object.keys(own.allowScripts ?? {}).map((entry) => entry.replace(/(.)@.*$/, '$1'));

  it('are each reviewed in package.json allowScripts', () => {
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([]);
    expect(reviewed.filter((name) => !withScripts.includes(name))).toEqual([]);
  });

  const npm = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
  it.skipIf(!semver.satisfies(npm, '>=11.19'))(
    'leave npm nothing to warn about (npm install-scripts ls)',
    () => {
      const out = execFileSync('npm', ['install-scripts', 'ls'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(out.trim()).toBe('No packages with unreviewed install scripts.');
    },
  );
});
