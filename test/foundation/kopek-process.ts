import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedPgliteDir } from '../fresh-store.js';

export const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The compiled CLI (the tests' global set-up builds dist/ once per run): `node` with these
 * arguments is `kopek`. One test per binary starts it as a user does (bin/kopek.js, npm start).
 *
 * `--liftoff-only` keeps V8 from compiling the embedded store's WebAssembly a second time with its
 * optimizing compiler, in the background, for a process that lives a few seconds: a start on a
 * seeded store took 4.7 s of CPU with it and 3.4 s without. `--max-opt=1` does the same for the
 * JavaScript (V8's interpreter and baseline compiler, no TurboFan): a `serve` start on PostgreSQL
 * 2.3 s of CPU with TurboFan, 1.7 s without, and the six files whose processes do the most work
 * (10,000 renewals by three processes among them) 50 s with it, 43–45 s without. The same code
 * runs, only less optimized. The test workers run with `--liftoff-only` too (vitest.config.ts).
 */
export const KOPEK = ['--liftoff-only', '--max-opt=1', join(ROOT, 'dist', 'cli.js')];

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Settles as soon as the output so far passes `check` (looked at on each chunk the process
   * writes, not on a timer); fails with the output if the process exits first, or after `ms`.
   */
  untilOutput(what: string, check: (output: string) => boolean, ms?: number): Promise<void>;
}

const started = new Set<ChildProcess>();

/**
 * The environment of a Kopek process on the embedded store in `dataDir`, whatever store the test run
 * itself uses.
 */
export function embeddedEnv(dataDir: string, port = 0): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'warn',
  };
  for (const name of [
    'DATABASE_URL',
    'KOPEK_MASTER_KEY',
    'KOPEK_MASTER_KEY_PREVIOUS',
    'NODE_OPTIONS',
    'GATEWAY_URL',
    'CHECKOUT_URL',
  ])
    delete env[name];
  return env;
}

/**
 * A new DATA_DIR whose embedded store is as a first start's migrations leave it (from the run's
 * migrated template): a first `kopek serve` there skips creating the cluster and migrating it,
 * seconds of a test about something else. The caller removes the directory.
 */
export async function seededDataDir(prefix = 'kopek-'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  await seedPgliteDir(join(dir, 'pglite'));
  return dir;
}

/** Starts a command in its own process group, so that cleanUp also reaches whatever it started. */
export function start(command: string, args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.add(child);
  let output = '';
  // Whoever waits on the output hears of each chunk as it comes.
  const listeners = new Set<() => void>();
  const append = (d: Buffer) => {
    output += d;
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const untilOutput = (what: string, check: (output: string) => boolean, ms = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        listeners.delete(look);
        clearTimeout(guard);
        if (error) reject(error);
        else resolve();
      };
      const look = () => {
        if (check(output)) done();
      };
      // A guard against a hung process, not a measure: the test's own timeout is longer.
      const guard = setTimeout(() => done(new Error(`timed out waiting for ${what}:\n${output}`)), ms);
      listeners.add(look);
      void exited.then(({ code, signal }) =>
        // Its last output is read before the exit is told (the streams close first).
        setImmediate(() => {
          if (check(output)) done();
          else done(new Error(`it exited (${code ?? signal}) before ${what}:\n${output}`));
        }),
      );
      look();
    });
  return { child, output: () => output, exited, untilOutput };
}

/** Runs the compiled CLI to its end. */
export async function kopek(env: NodeJS.ProcessEnv, ...args: string[]) {
  const run = start(process.execPath, [...KOPEK, ...args], env);
  const { code } = await run.exited;
  return { code, output: run.output() };
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const until = performance.now() + ms;
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits for the server's banner; fails at once, with its output, if it exits instead. */
export async function waitForBanner(s: Started): Promise<void> {
  await s.untilOutput('the banner', (output) => output.includes('Kopek is running'));
}

/** The DATA_DIR lock's record, while some process holds it. */
export function lockOf(dir: string): { pid: number; socket?: string } | undefined {
  const file = join(dir, 'kopek.lock');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Kills every process group a test started that may still be there. */
export function cleanUp(): void {
  for (const child of started) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  started.clear();
}

/**
 * These tests run `kopek` on its embedded store whatever DATABASE_URL says, so the PostgreSQL pass
 * of the suite would only repeat the PGlite pass: they run once, in the PGlite pass.
 */
export const EMBEDDED_ONLY = { skip: Boolean(process.env.DATABASE_URL) } as const;
