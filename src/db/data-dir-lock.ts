import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { systemClock } from '../clock.js';
import { PRIVATE_FILE_MODE, privateDataDir, tightenDataDir } from './data-dir-mode.js';

/** What a lock file says about the process that holds DATA_DIR. */
export interface LockHolder {
  pid: number;
  /** The command it runs, for messages: `kopek serve`, `kopek migrate`… */
  command: string;
  /** The control socket through which a running server takes CLI commands. */
  socket?: string;
  since: string;
}

export class DataDirLock {
  #released = false;
  constructor(
    readonly file: string,
    readonly holder: LockHolder,
    private readonly text: string,
  ) {}

  /** Removes the lock file, if it is still this one. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    held.delete(this.file);
    if (readText(this.file) === this.text) unlinkQuietly(this.file);
  }
}

export const LOCK_FILE = 'kopek.lock';

/** DATA_DIR is held by another live process; nothing was changed. */
export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
    what: string,
  ) {
    super(
      `The embedded store in ${dataDir} is in use by process ${holder.pid} (${holder.command}, since ${holder.since}); ${what}\n` +
        `If no such process is running, delete ${resolve(dataDir, LOCK_FILE)} and try again.`,
    );
  }
}

/** Takes DATA_DIR for this process, or throws DataDirBusyError. */
export async function lockDataDir(
  dataDir: string,
  who: { command: string; socket?: string },
): Promise<DataDirLock> {
  const got = await tryLockDataDir(dataDir, who);
  if (got instanceof DataDirLock) return got;
  throw new DataDirBusyError(
    dataDir,
    got,
    'only one process at a time may open it. Stop that process first, or run several instances against PostgreSQL (DATABASE_URL).',
  );
}

// Locks this process holds, by file: a second open in the same process is refused like any other
// (two PGlite instances on one directory are as harmful there), and the exit handler releases what
// close() did not (process.exit skips every finally).
const held = new Map<string, DataDirLock>();
let exitHookInstalled = false;

/**
 * Takes DATA_DIR for this process, or says who holds it. The lock file appears with its content in one
 * step (a hard link of a finished temporary file), so a reader never sees it half written. A lock
 * whose holder is gone is removed under a second, short-lived lock file, after checking that it is
 * still the same lock: of several processes finding the same stale lock, exactly one replaces it.
 */
export async function tryLockDataDir(
  dataDir: string,
  who: { command: string; socket?: string },
): Promise<DataDirLock | LockHolder> {
  privateDataDir(dataDir);
  const file = resolve(dataDir, LOCK_FILE);
  const holder: LockHolder = { pid: process.pid, ...who, since: systemClock.now().toISOString() };
  const text = `${JSON.stringify(holder)}\n`;
  const mine = held.get(file);
  if (mine) return mine.holder;
  for (let attempt = 0; attempt < 200; attempt++) {
    if (createWithContent(file, text)) {
      const lock = new DataDirLock(file, holder, text);
      held.set(file, lock);
      installExitHook();
      // Only its holder changes DATA_DIR: what an older Kopek left open to others is closed now.
      tightenDataDir(dataDir);
      return lock;
    }
    const seen = readText(file);
    if (seen === undefined) continue;
    const other = parseHolder(seen);
    if (other && (await holderAlive(other))) return other;
    if (!removeIfUnchanged(file, seen)) await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`could not take ${file}: it kept changing`);
}

function createWithContent(file: string, text: string): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, text, { flag: 'wx', mode: PRIVATE_FILE_MODE });
  try {
    linkSync(temp, file);
    return true;
  } catch (err) {
    if (errno(err) === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkQuietly(temp);
  }
}

// The guard is held for a few synchronous statements; one older than this was left by a process
// killed in between, and may go.
const GUARD_STALE_MS = 10_000;

function removeIfUnchanged(file: string, seen: string): boolean {
  const guard = `${file}.takeover`;
  try {
    closeSync(openSync(guard, 'wx'));
  } catch (err) {
    if (errno(err) !== 'EEXIST') throw err;
    const age = ageMs(guard);
    if (age !== undefined && age > GUARD_STALE_MS) unlinkQuietly(guard);
    return false;
  }
  try {
    if (readText(file) === seen) unlinkQuietly(file);
  } finally {
    unlinkQuietly(guard);
  }
  return true;
}

async function holderAlive(h: LockHolder): Promise<boolean> {
  // A lock with this process's pid that this process does not hold was left by an earlier process
  // that had the same pid (a container's pid 1, say).
  if (h.pid !== process.pid && pidAlive(h.pid)) return true;
  // A holder in another pid namespace (a second container on the same volume) has a pid we cannot
  // check, but its server still answers on the socket.
  return h.socket !== undefined && socketAnswers(h.socket);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to another user.
    return errno(err) !== 'ESRCH';
  }
}

function socketAnswers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(path);
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      done(false);
    });
    socket.once('error', () => done(false));
  });
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    // A pid of 0 or below would signal a whole process group, so it is no holder.
    if (!Number.isSafeInteger(h.pid) || (h.pid as number) <= 0) return undefined;
    return {
      pid: h.pid as number,
      command: typeof h.command === 'string' ? h.command : 'unknown',
      ...(typeof h.socket === 'string' ? { socket: h.socket } : {}),
      since: typeof h.since === 'string' ? h.since : 'unknown',
    };
  } catch {
    return undefined;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const lock of [...held.values()]) lock.release();
  });
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if (errno(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function ageMs(file: string): number | undefined {
  try {
    return systemClock.now().getTime() - statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err;
  }
}

function errno(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined;
}
