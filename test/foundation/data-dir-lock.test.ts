import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { runKopek } from '../cli/run-cli.js';
import { cleanUp, EMBEDDED_ONLY, embeddedEnv, lockOf, start } from './kopek-process.js';

/** The DATA_DIR lock between processes: a holder that does not answer, a stale lock, a race for it. */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-store-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A pid that belonged to a process and no longer does. */
async function deadPid(): Promise<number> {
  const s = start(process.execPath, ['-e', ''], process.env);
  await s.exited;
  return s.child.pid as number;
}

describe('the DATA_DIR lock', { timeout: 120_000, ...EMBEDDED_ONLY }, () => {
  it('a live holder that does not answer: the CLI says so, exits 3 and changes nothing', async () => {
    const dir = tempDir();
    // The test run's main process is alive and is no Kopek server.
    const lock = JSON.stringify({
      pid: process.ppid,
      command: 'kopek serve',
      socket: join(dir, 'control', 'kopek.sock'),
      since: '2026-01-01T00:00:00.000Z',
    });
    writeFileSync(join(dir, 'kopek.lock'), lock);
    // The CLI runs in this process: what is between processes here is the lock and its holder.
    const run = await runKopek(undefined, embeddedEnv(dir), 'shop', 'create', '--test');
    expect(run.code, run.output).toBe(3);
    expect(run.output).toContain(`is in use by process ${process.ppid}`);
    expect(run.output).toContain('does not answer on its control socket');
    expect(run.output).not.toContain('Secret key');
    expect(existsSync(join(dir, 'pglite'))).toBe(false);
    expect(readFileSync(join(dir, 'kopek.lock'), 'utf8')).toBe(lock);
  });

  it('a stale lock, left by a process that is gone, is taken over and released', async () => {
    const dir = tempDir();
    const pid = await deadPid();
    const socket = join(dir, 'control', 'kopek.sock');
    writeFileSync(
      join(dir, 'kopek.lock'),
      JSON.stringify({ pid, command: 'kopek serve', socket, since: 'x' }),
    );
    const run = await runKopek(undefined, embeddedEnv(dir), 'shop', 'list');
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain('No shops yet');
    expect(lockOf(dir)).toBeUndefined();
  });

  it('of several processes finding the same stale lock, exactly one takes it', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'kopek.lock'),
      JSON.stringify({ pid: await deadPid(), command: 'x', since: 'x' }),
    );
    // Each says it is ready, waits for the word to go, tries once, and holds what it got until all
    // have tried.
    const go = join(dir, 'go');
    const done = join(dir, 'done');
    // The lock's module as plain JavaScript for the racers (dist/ holds it bundled into the program).
    const lockModule = join(dir, 'data-dir-lock.mjs');
    await build({
      entryPoints: [join(import.meta.dirname, '../../src/db/data-dir-lock.ts')],
      outfile: lockModule,
      bundle: true,
      format: 'esm',
      platform: 'node',
      logLevel: 'warning',
    });
    const script = `
      import { existsSync } from 'node:fs';
      import { DataDirLock, tryLockDataDir } from ${JSON.stringify(lockModule)};
      const until = async (file) => { while (!existsSync(file)) await new Promise((r) => setTimeout(r, 1)); };
      console.log('ready');
      await until(${JSON.stringify(go)});
      const got = await tryLockDataDir(${JSON.stringify(dir)}, { command: 'race' });
      console.log(got instanceof DataDirLock ? 'won' : 'lost');
      await until(${JSON.stringify(done)});
    `;
    const racers = Array.from({ length: 6 }, () =>
      start(process.execPath, ['--input-type=module', '-e', script], process.env),
    );
    const said = (what: string, word: RegExp) =>
      Promise.all(racers.map((r) => r.untilOutput(what, (output) => word.test(output))));
    await said('every racer to be ready', /ready/);
    writeFileSync(go, '');
    await said('every racer to try', /won|lost/);
    writeFileSync(done, '');
    await Promise.all(racers.map((r) => r.exited));
    const results = racers.map((r) => r.output().replace('ready', '').trim());
    expect(
      results.filter((r) => r === 'won'),
      results.join('\n'),
    ).toHaveLength(1);
    expect(results.filter((r) => r === 'lost')).toHaveLength(5);
  });
});
