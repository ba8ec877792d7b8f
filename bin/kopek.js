#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=50 --expose-gc
// The flags bound the memory a Kopek process holds (docs/performance.md, Memory); package.json's start
// script and the Dockerfile give the same. --max-semi-space-size=16: a young generation of 2 × 16 MB,
// V8's default (32 took 64 MB of RSS once traffic had grown it, for about a tenth less CPU per
// request). --heap-growing-percent=50: a major collection once the old generation has grown by half
// of what was live after the last one; V8 otherwise lets it grow by up to four times (about twice
// here), plus the young generation's size: the billing engine's and the deliverer's peaks were that
// garbage. There is no limit on the heap's size. --expose-gc: a serving process that has gone quiet
// runs one full collection to give back what start-up or its last burst left (src/compose/idle-memory.ts).
// Kopek always runs compiled (dist/). In a checkout whose sources are newer than the build (or that
// was never built), it first builds with `npm run build`, which needs the dev dependencies; an
// installation without sources (`npm ci --omit=dev` beside a built dist/) runs dist/ as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const root = fileURLToPath(new URL('..', import.meta.url));
// Written by `npm run build` once dist/ is complete.
const stamp = `${root}dist/.build-stamp`;

/** The newest modification time of anything under dir. */
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const built = existsSync(stamp);
const sources = existsSync(`${root}src`);
if (sources && (!built || statSync(stamp).mtimeMs < newest(`${root}src`))) {
  process.stderr.write(
    built ? 'Sources changed since the last build: building Kopek…\n' : 'Building Kopek…\n',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  if (build.status !== 0) {
    process.stderr.write('The build failed (it needs the dev dependencies: npm install).\n');
    process.exit(build.status ?? 1);
  }
} else if (!built) {
  process.stderr.write('Kopek is not built: dist/ is missing. Run `npm run build` where the sources are.\n');
  process.exit(1);
}
// A command that runs once and exits (everything but `serve`) gets the embedded store's WebAssembly
// from V8's baseline compiler only: its optimizing compiler would recompile the hot functions in the
// background, about a third of such a command's CPU, for a process that is gone a moment later.
// What runs is the same code; a serving process keeps both compilers.
if (process.argv[2] !== 'serve') setFlagsFromString('--liftoff-only');
await import('../dist/cli.js');
