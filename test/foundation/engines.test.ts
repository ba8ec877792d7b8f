import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Kopek runs on Node 20 (package.json engines). Every package the lock file installs, the tools of
 * the tests included, must say it runs there too: otherwise `npm install` warns EBADENGINE and the
 * package may break on the Node our operators run.
 */

const ROOT = join(import.meta.dirname, '..', '..');
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: Record<string, string> | string[] }>;
};
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };

describe('Node 20', () => {
  it('is what Kopek asks for', () => {
    expect(own.engines.node).toBe('>=20');
  });

  it('is admitted by every installed package', () => {
    const refused: string[] = [];
    for (const [path, pkg] of Object.entries(lock.packages)) {
      const node = pkg.engines && !Array.isArray(pkg.engines) ? pkg.engines.node : undefined;
      if (!path || node === undefined) continue;
      if (!semver.satisfies(process.version, node, { includePrerelease: true }))
        refused.push(`${path.replace(/^node_modules\//, '')}@${pkg.version}: node ${node}`);
    }
    expect(refused).toEqual([]);
  });
});
