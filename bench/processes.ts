import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every child still running: killed on any way out of the benchmark, including an uncaught error. */
const running = new Set<ChildProcess>();

process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface Child {
  name: string;
  proc: ChildProcess;
  /** The last lines the child wrote, shown when it fails. */
  tail: string[];
  /** The exit code, or the signal that ended it. */
  exited: Promise<number | string>;
}

/** A port that was free a moment ago; the server is started on it right away. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The Node flags `npm start` runs Kopek with (read from package.json's start script): both servers
 * and the benchmarks' workers get them, so they run as they would be run.
 */
export const NODE_FLAGS = startFlags();

/**
 * Runs a TypeScript entry point of the repository in its own Node process, through tsx; `ipc` opens
 * a message channel to it (process.send in the child, child.proc.on('message') here).
 */
export function startChild(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
  options: { ipc?: boolean } = {},
): Child {
  return spawnNode(name, [...NODE_FLAGS, ...nodeArgs, '--import', 'tsx', ...args], env, options);
}

/**
 * The Node flags of `npm start`, read from package.json's start script (`node <flags> bin/kopek.js
 * serve`), so that a process started as an operator starts it runs with the flags it would have.
 */
export function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  const from = words.indexOf('node');
  const to = words.indexOf('bin/kopek.js');
  if (from < 0 || to < from)
    throw new Error(`the start script is not "node <flags> bin/kopek.js …": ${pkg.scripts.start}`);
  return words.slice(from + 1, to);
}

/**
 * Runs `kopek <args>` as an operator runs it: compiled (bin/kopek.js, which runs dist/ and builds it
 * first when the sources are newer), with the flags of `npm start`.
 */
export function startKopek(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  flags: string[] = startFlags(),
): Child {
  return spawnNode(name, [...flags, join(ROOT, 'bin', 'kopek.js'), ...args], env);
}

/**
 * Runs a TypeScript script of the benchmarks (the baseline) compiled, as Kopek runs (startKopek), so
 * that neither side of a ratio pays for TypeScript compiled on the fly: tsc writes it to
 * bench/results/compiled/ (inside the repository, so its imports resolve to node_modules).
 */
export function startCompiled(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  nodeArgs: string[] = [],
): Child {
  const outDir = join(ROOT, 'bench', 'results', 'compiled');
  const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
  const options = ['--module', 'nodenext', '--target', 'es2023', '--skipLibCheck', '--outDir', outDir];
  execFileSync(tsc, ['--ignoreConfig', ...options, join(ROOT, script)], { cwd: ROOT, stdio: 'inherit' });
  const file = join(outDir, script.replace(/^.*\//, '').replace(/\.ts$/, '.js'));
  return spawnNode(name, [...NODE_FLAGS, ...nodeArgs, file], env);
}

function spawnNode(
  name: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  options: { ipc?: boolean } = {},
): Child {
  const proc = spawn(process.execPath, argv, {
    cwd: ROOT,
    env,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (process.env.BENCH_VERBOSE) console.error(`[${name}] ${line}`);
    }
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      resolve(code ?? signal ?? 'unknown');
    });
    proc.once('error', (err) => {
      running.delete(proc);
      resolve(err.message);
    });
  });
  return { name, proc, tail, exited };
}

/** A benchmark run's guard: the children it started, the signal that stops its work, its watchdog. */
export interface RunGuard {
  /** Every child process started for the run, killed when the run is stopped. */
  children: Child[];
  /** Aborted when the run is stopped (SIGINT, SIGTERM, or the watchdog). */
  signal: AbortSignal;
  /** Ends the watchdog once the run is over. */
  done(): void;
}

/**
 * Stops a benchmark run on SIGINT or SIGTERM (a second one exits at once), or when it has taken
 * longer than `budgetSec`: its work is aborted and its children are killed, and the process exits
 * 30 s later if the run has not wound down by then.
 */
export function guardRun(budgetSec: number): RunGuard {
  const abort = new AbortController();
  const children: Child[] = [];
  const stop = (why: Error) => {
    if (abort.signal.aborted) process.exit(130);
    console.error(`\n${why.message}: stopping (again to force)`);
    abort.abort(why);
    for (const c of children) c.proc.kill('SIGKILL');
    setTimeout(() => process.exit(1), 30_000).unref();
  };
  process.on('SIGINT', () => stop(new Error('interrupted by SIGINT')));
  process.on('SIGTERM', () => stop(new Error('interrupted by SIGTERM')));
  const watchdog = setTimeout(
    () => stop(new Error(`the benchmark took longer than ${Math.round(budgetSec)} s`)),
    budgetSec * 1000,
  );
  watchdog.unref();
  return { children, signal: abort.signal, done: () => clearTimeout(watchdog) };
}

export function describeFailure(child: Child, what: string): Error {
  return new Error(`${child.name}: ${what}\n--- last output of ${child.name} ---\n${child.tail.join('\n')}`);
}

/** Runs a command to its end (through tsx, or as `start` starts it); rejects on a non-zero exit or when it takes longer than timeoutMs. */
export async function runToEnd(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal: AbortSignal,
  start: (name: string, args: string[], env: NodeJS.ProcessEnv) => Child = startChild,
): Promise<string> {
  const child = start(name, args, env);
  const kill = () => child.proc.kill('SIGKILL');
  const timer = setTimeout(kill, timeoutMs);
  signal.addEventListener('abort', kill, { once: true });
  const code = await child.exited;
  clearTimeout(timer);
  signal.removeEventListener('abort', kill);
  if (signal.aborted) throw signal.reason;
  if (code !== 0) throw describeFailure(child, `exited with ${code}`);
  return child.tail.join('\n');
}

/** SIGTERM (the server's graceful shutdown), then SIGKILL if it is still there after graceMs. */
export async function stopChild(child: Child, graceMs = 5000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

/** Polls url until it answers 2xx; fails early when the child exits. */
export async function waitForHealth(
  child: Child,
  url: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (signal.aborted) throw signal.reason;
    if (exited) throw describeFailure(child, 'exited before it became healthy');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw describeFailure(child, `not healthy at ${url} after ${timeoutMs} ms`);
}

/**
 * CPU seconds a process has used so far (all its threads), from /proc; undefined off Linux.
 * CPU per request stays meaningful when other work on the machine makes req/s noisy.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / CLOCK_TICKS : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds each PostgreSQL process on this machine (backends, WAL writer, checkpointer…) has used
 * so far, by process id; undefined off Linux.
 */
export function postgresCpuSeconds(): Map<number, number> | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const used = new Map<number, number>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const seconds = cpuSeconds(Number(name));
      if (seconds !== undefined) used.set(Number(name), seconds);
    } catch {
      // The process ended while being read.
    }
  }
  return used;
}

/**
 * CPU seconds PostgreSQL used between two readings: processes that ended in between (an idle pool
 * connection closing, an autovacuum worker) are left out, so this is a lower bound.
 */
function postgresCpuBetween(before: Map<number, number> | undefined, after: Map<number, number> | undefined) {
  if (!before || !after) return undefined;
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** Starts measuring; the function it returns gives CPU ms per request of the server and database. */
export function cpuMeter(
  serverPid: number | undefined,
  localDatabase: boolean,
): (requests: number) => { serverCpuMsPerReq: number | null; databaseCpuMsPerReq: number | null } {
  const server = cpuSeconds(serverPid);
  const database = localDatabase ? postgresCpuSeconds() : undefined;
  return (requests) => {
    const serverUsed = server === undefined ? undefined : (cpuSeconds(serverPid) ?? server) - server;
    const databaseUsed = postgresCpuBetween(database, localDatabase ? postgresCpuSeconds() : undefined);
    const perRequest = (seconds: number | undefined) =>
      seconds !== undefined && requests > 0 ? Math.round((seconds * 1e6) / requests) / 1000 : null;
    return { serverCpuMsPerReq: perRequest(serverUsed), databaseCpuMsPerReq: perRequest(databaseUsed) };
  };
}

// USER_HZ: 100 on every Linux architecture Node runs on.
const CLOCK_TICKS = 100;
