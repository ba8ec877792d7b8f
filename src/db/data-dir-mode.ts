import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR holds the embedded store (sealed cards, shops' keys, sessions), master.key, the lock and
 * the control socket: only the user Kopek runs as may read or change any of it. Directories are
 * 0700, files 0600.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** DATA_DIR is open to other users; nothing was opened or changed. */
export class DataDirUnsafeError extends Error {}

const errno = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined;

/**
 * Makes whatever this process creates from now on private to its user (umask 077), creates DATA_DIR
 * as 0700 when it is missing, and refuses one that other users may write to or that belongs to
 * another user: they could replace the store, its keys or the control socket.
 */
export function privateDataDir(dataDir: string): void {
  restrictUmask();
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const st = statSync(dataDir);
  if (!st.isDirectory()) throw new DataDirUnsafeError(`DATA_DIR ${dataDir} is not a directory.`);
  const uid = process.getuid?.();
  // Systems without POSIX owners and modes (Windows) have nothing here to check.
  if (uid === undefined) return;
  if (st.uid !== uid && st.uid !== 0) {
    throw new DataDirUnsafeError(
      `DATA_DIR ${dataDir} belongs to another user (uid ${st.uid}), and this process runs as uid ${uid}: ` +
        `run Kopek as the user that owns it, or give it to this one (chown -R ${uid} ${dataDir}).`,
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw new DataDirUnsafeError(
      `DATA_DIR ${dataDir} can be written by other users (mode ${modeText(st.mode)}): they could replace ` +
        `the store, its keys or its control socket, so Kopek does not open it. Make it private with: chmod 700 ${dataDir}`,
    );
  }
}

/**
 * Takes group and others' access away from DATA_DIR and everything in it: directories 0700, files
 * 0600. A data directory made by an older Kopek (or copied with default modes) had files any local
 * user could read. Symbolic links are left alone, and so is whatever belongs to another user.
 */
export function tightenDataDir(dataDir: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  tighten(dataDir, uid);
}

function tighten(path: string, uid: number): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return;
    throw err;
  }
  if (st.isSymbolicLink() || st.uid !== uid) return;
  const wanted = st.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
  if ((st.mode & 0o777) !== wanted) {
    try {
      chmodSync(path, wanted);
    } catch (err) {
      if (errno(err) !== 'ENOENT') throw err;
    }
  }
  if (!st.isDirectory()) return;
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (err) {
    if (errno(err) === 'ENOENT') return;
    throw err;
  }
  for (const name of names) tighten(join(path, name), uid);
}

/** Group and others get no access to what this process creates (worker threads cannot change it). */
function restrictUmask(): void {
  try {
    const before = process.umask(0o077);
    process.umask(before | 0o077);
  } catch {
    // Not the main thread: the embedded store's files are made private anyway (src/db/private-fs.ts).
  }
}

function modeText(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}
