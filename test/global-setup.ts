import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startBrowserBroker } from './browser/broker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgSchema: string | undefined;
    /** Where browser tests ask for the run's one Chromium (test/browser/broker.ts). */
    browserBroker: string;
  }
}

/**
 * Kopek as an operator runs it: compiled once per run into dist/, so that each test that starts a
 * `kopek` process starts in about a second instead of compiling TypeScript for three to seven.
 */
function buildDist(): void {
  execFileSync('npm', ['run', '--silent', 'build'], {
    cwd: join(import.meta.dirname, '..'),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Once per run: dist/ built, the browser broker listening, and with DATABASE_URL set a fresh schema,
 * dropped at the end, so runs never see each other's rows or an older shape of the tables.
 */
export default async function setup(project: TestProject) {
  buildDist();
  const broker = await startBrowserBroker();
  project.provide('browserBroker', broker.url);
  const url = process.env.DATABASE_URL;
  let schema: string | undefined;
  if (url) {
    schema = `kopek_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`CREATE SCHEMA ${schema}`);
    await client.end();
  }
  project.provide('pgSchema', schema);
  return async () => {
    await broker.close();
    if (!url || !schema) return;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  };
}
