import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import type { SigningKeys } from '../src/shops/service.js';
import { startBrowserBroker } from './browser/broker.js';
import { makeSigningKeyPool } from './signing-keys.js';
import { prepareStoreTemplates, type StoreTemplates } from './store-templates.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's store templates and shared store (test/store-templates.ts, test/fresh-store.ts). */
    storeTemplates: StoreTemplates;
    /** Where browser tests ask for the run's one Chromium (test/browser/broker.ts). */
    browserBroker: string;
    /** Notification-signing key pairs made once for the run (test/signing-keys.ts). */
    signingKeys: SigningKeys[];
  }
}

const ROOT = join(import.meta.dirname, '..');

/** The newest modification time of `path` and of anything under it. */
function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/**
 * Whether dist/ is a complete build (`npm run build` writes its stamp last) of the sources as they
 * are: nothing under src/, nor the build's own settings, changed since.
 */
function distIsCurrent(): boolean {
  const stamp = join(ROOT, 'dist', '.build-stamp');
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return ['src', 'scripts/build.mjs', 'tsconfig.build.json', 'tsconfig.json', 'package.json'].every(
    (path) => newest(join(ROOT, path)) < built,
  );
}

/**
 * Kopek as an operator runs it: bundled into dist/, so that each test that starts a `kopek` process
 * starts in about a second instead of compiling TypeScript for three to seven. A run builds only
 * when the sources changed since the last build: running one test file after another does not pay
 * a build (seconds of both cores) each time.
 */
async function buildDist(): Promise<void> {
  if (distIsCurrent()) return;
  const { stderr } = await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT });
  if (stderr) process.stderr.write(stderr);
}

/**
 * Once per run: dist/ built (when the sources changed), the browser broker listening, signing key pairs made, and the store templates made (with
 * DATABASE_URL, a template database and the run's shared store copied from it, all dropped at the
 * end, so runs never see each other's rows or an older shape of the tables).
 */
export default async function setup(project: TestProject) {
  // The build runs in its own process while this one makes the templates.
  const [built, prepared, keys] = await Promise.allSettled([
    buildDist(),
    prepareStoreTemplates(process.env.DATABASE_URL),
    makeSigningKeyPool(),
  ]);
  if (prepared.status === 'rejected') throw prepared.reason;
  const stores = prepared.value;
  for (const done of [built, keys])
    if (done.status === 'rejected') {
      await stores.remove();
      throw done.reason;
    }
  if (keys.status === 'fulfilled') project.provide('signingKeys', keys.value);
  project.provide('storeTemplates', stores.templates);
  const broker = await startBrowserBroker();
  project.provide('browserBroker', broker.url);
  return async () => {
    await broker.close();
    await stores.remove();
  };
}
