import { execFile } from 'node:child_process';
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

/**
 * Kopek as an operator runs it: compiled once per run into dist/, so that each test that starts a
 * `kopek` process starts in about a second instead of compiling TypeScript for three to seven.
 */
async function buildDist(): Promise<void> {
  const { stderr } = await promisify(execFile)('npm', ['run', '--silent', 'build'], {
    cwd: join(import.meta.dirname, '..'),
  });
  if (stderr) process.stderr.write(stderr);
}

/**
 * Once per run: dist/ built, the browser broker listening, signing key pairs made, and the store templates made (with
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
