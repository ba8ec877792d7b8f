/**
 * The parent side of the benchmarks that run worker processes (renewals.ts, webhooks.ts): settings,
 * a schema's URL, worker processes started together and released, what PostgreSQL used meanwhile
 * (CPU from /proc, WAL), CPU profiles, and the commit measured.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { type Child, describeFailure, postgresCpuSeconds, ROOT, startChild } from './processes.js';

/** What every worker says: `ready`, its result, or why it failed. */
export interface WorkerMessage {
  type: string;
  error?: string;
}

export function intList(name: string, fallback: number[], min: number): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw.split(',').map((part) => {
    const n = Number(part.trim().replace(/_/g, ''));
    if (!Number.isInteger(n) || n < min)
      throw new Error(`${name} must be whole numbers ≥ ${min}, comma-separated; got "${raw}"`);
    return n;
  });
}

/**
 * The schema's URL; with BENCH_SYNCHRONOUS_COMMIT (on, off…) every connection of both phases also
 * sets synchronous_commit: `off` shows what the engine does when commits do not wait for the disk.
 */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  const sync = process.env.BENCH_SYNCHRONOUS_COMMIT;
  if (sync !== undefined && !/^(on|off|local|remote_write|remote_apply)$/.test(sync))
    throw new Error(
      `BENCH_SYNCHRONOUS_COMMIT must be on, off, local, remote_write or remote_apply, got "${sync}"`,
    );
  u.searchParams.set('options', `-c search_path=${schema}${sync ? ` -c synchronous_commit=${sync}` : ''}`);
  // Names the benchmark's backends in pg_stat_activity, for their CPU time.
  u.searchParams.set('application_name', schema);
  return u.toString();
}

export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function onMessage<M extends WorkerMessage = WorkerMessage>(child: Child): Promise<M> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(describeFailure(child, `exited with ${code}`));
    child.proc.once('exit', onExit);
    child.proc.once('message', (m: M) => {
      child.proc.off('exit', onExit);
      if (m.type === 'failed') reject(describeFailure(child, `failed: ${m.error}`));
      else resolve(m);
    });
  });
}

/** Starts k processes of `script` (a file of bench/) in `mode`, and waits until each says ready. */
export async function startWorkers(
  script: string,
  mode: string,
  k: number,
  env: NodeJS.ProcessEnv,
  nodeArgs: string[],
  children: Child[],
): Promise<Child[]> {
  const started = Array.from({ length: k }, (_, i) =>
    startChild(`${mode} ${i + 1}`, [`bench/${script}`, mode], env, nodeArgs, { ipc: true }),
  );
  children.push(...started);
  const ready = await Promise.all(started.map((c) => onMessage(c)));
  if (ready.some((m) => m.type !== 'ready')) throw new Error(`${mode}: a worker did not say ready`);
  return started;
}

/** Starts the workers together; their results, while they still hold their connections. */
export async function finish<T extends WorkerMessage>(workers: Child[], go: object): Promise<T[]> {
  const done = workers.map(onMessage);
  for (const w of workers) w.proc.send({ type: 'go', ...go });
  return (await Promise.all(done)) as T[];
}

export async function release(workers: Child[]): Promise<void> {
  for (const w of workers) w.proc.send({ type: 'exit' });
  await Promise.all(workers.map((w) => w.exited));
}

export interface DatabaseMark {
  /** CPU seconds so far of every PostgreSQL process of this machine, by pid (undefined when remote). */
  cpu: Map<number, number> | undefined;
  /** The backends serving the benchmark's own connections (application_name `tag`). */
  backends: number[];
  tag: string;
  wal: string;
}

export async function markDatabase(url: string, local: boolean, tag: string): Promise<DatabaseMark> {
  return withClient(url, async (c) => {
    const wal = (await c.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l as string;
    const { rows } = await c.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [tag]);
    return {
      cpu: local ? postgresCpuSeconds() : undefined,
      backends: rows.map((r) => r.pid as number),
      tag,
      wal,
    };
  });
}

/**
 * What PostgreSQL did since `mark`: WAL bytes written (by anyone), and CPU seconds of the
 * benchmark's backends (those there at the mark, and those its pools opened since) and of all its
 * processes (the WAL writer, checkpointer, autovacuum… and whatever else this machine's PostgreSQL
 * serves meanwhile). Read before the workers disconnect: an ended backend's time is gone from /proc.
 */
export async function sinceMark(url: string, mark: DatabaseMark) {
  const { walBytes, pids } = await withClient(url, async (c) => {
    const wal = await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS d', [mark.wal]);
    const { rows } = await c.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
      mark.tag,
    ]);
    return { walBytes: wal.rows[0].d as number, pids: rows.map((r) => r.pid as number) };
  });
  const after = mark.cpu ? postgresCpuSeconds() : undefined;
  if (!mark.cpu || !after) return { walBytes: Number(walBytes), backendsSec: null, allSec: null };
  let allSec = 0;
  for (const [pid, s] of after) allSec += s - (mark.cpu.get(pid) ?? 0);
  let backendsSec = 0;
  // A backend started since the mark has all its time in the run (its connection's start included).
  for (const pid of new Set([...mark.backends, ...pids]))
    backendsSec += (after.get(pid) ?? 0) - (mark.cpu.get(pid) ?? 0);
  return { walBytes: Number(walBytes), backendsSec, allSec };
}

export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Each engine process's profile of its main thread, by process id: the largest of the process's
 * files (the module loader's thread, under tsx, writes a small one of its own).
 */
export function profilesOf(dir: string, pids: (number | undefined)[]): string[] | undefined {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return undefined;
  }
  const found = pids.map((pid) => {
    const mine = files.filter((f) => f.split('.')[3] === String(pid)).map((f) => join(dir, f));
    return mine.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  });
  return found.every((f) => f !== undefined) ? (found as string[]) : undefined;
}

export const checkpoint = (url: string) => withClient(url, (c) => c.query('CHECKPOINT'));

/** The commit measured, and the files of src/ that differed from it (others may work in this tree). */
export function codeMeasured(): { commit: string; srcChanged: string[] } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const changed = git('status', '--porcelain', '--', 'src');
    return { commit: git('rev-parse', 'HEAD'), srcChanged: changed ? changed.split('\n') : [] };
  } catch {
    return { commit: 'unknown', srcChanged: [] };
  }
}
