import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startRuntime } from '../../src/compose/runtime.js';
import { loadConfig } from '../../src/config.js';
import { holdDataDir } from '../../src/control/server.js';
import { DataDirUnsafeError } from '../../src/db/data-dir-mode.js';
import { runKopek } from '../cli/run-cli.js';
import { EMBEDDED_ONLY } from './kopek-process.js';

/**
 * DATA_DIR holds sealed cards, shops' keys and sessions: every directory in it is 0700 and every file
 * 0600, whatever PGlite or an older Kopek did, and a DATA_DIR other users may write to is refused.
 * The store is opened as `kopek serve` opens it: the lock and control socket, then the runtime.
 */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-modes-'));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const log = pino({ level: 'silent' });

/** Opens the embedded store in dataDir as `kopek serve` does, runs `use`, and closes it. */
async function serveOn(dataDir: string, use: () => Promise<void> = async () => {}): Promise<void> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const held = await holdDataDir(dataDir, log);
  try {
    const { app, db } = await startRuntime(config, log, held.lock);
    try {
      await db.query('CREATE TABLE IF NOT EXISTS mode_probe (v text)');
      await use();
    } finally {
      await app.close();
      await db.close();
    }
  } finally {
    await held.close();
    held.lock.release();
  }
}

/** Every path under dir (dir included) whose mode is not 0700 for a directory or 0600 otherwise. */
function openModes(dir: string): string[] {
  const wrong: string[] = [];
  const walk = (path: string) => {
    const st = lstatSync(path);
    const mode = st.mode & 0o777;
    if (st.isDirectory()) {
      if (mode !== 0o700) wrong.push(`${path} ${mode.toString(8)}`);
      for (const name of readdirSync(path)) walk(join(path, name));
    } else if (mode !== 0o600) wrong.push(`${path} ${mode.toString(8)}`);
  };
  walk(dir);
  return wrong;
}

function countEntries(dir: string): number {
  let n = 0;
  const walk = (path: string) => {
    n++;
    if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
  return n;
}

/** The DATA_DIR the first test made, closed: later tests copy it rather than make another. */
let made: string | undefined;

describe('DATA_DIR modes', { timeout: 180_000, ...EMBEDDED_ONLY }, () => {
  it('creates a new DATA_DIR 0700 with every directory in it 0700 and every file 0600', async () => {
    const dataDir = join(tempDir(), 'data');
    await serveOn(dataDir, async () => {
      // While it runs: the lock, the control socket and the store's files.
      expect(existsSync(join(dataDir, 'kopek.lock'))).toBe(true);
      expect(existsSync(join(dataDir, 'control', 'kopek.sock'))).toBe(true);
      expect(openModes(dataDir)).toEqual([]);
    });
    expect(existsSync(join(dataDir, 'master.key'))).toBe(true);
    expect(countEntries(join(dataDir, 'pglite'))).toBeGreaterThan(100);
    expect(openModes(dataDir)).toEqual([]);
    made = dataDir;
  });

  it('closes an existing DATA_DIR that an older Kopek left readable to everyone', async () => {
    // A DATA_DIR as a first start leaves it: the first test's, copied (made here when it ran alone).
    const dataDir = join(tempDir(), 'data');
    if (made) cpSync(made, dataDir, { recursive: true });
    else await serveOn(dataDir);
    const widen = (path: string) => {
      const st = lstatSync(path);
      chmodSync(path, st.isDirectory() ? 0o755 : 0o666);
      if (st.isDirectory()) for (const name of readdirSync(path)) widen(join(path, name));
    };
    widen(dataDir);
    expect(openModes(dataDir).length).toBeGreaterThan(100);

    await serveOn(dataDir);
    expect(openModes(dataDir)).toEqual([]);
  });

  it('refuses a DATA_DIR that other users may write to, saying how to make it private', async () => {
    const dataDir = join(tempDir(), 'open');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o777);
    const error = await serveOn(dataDir).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DataDirUnsafeError);
    expect((error as Error).message).toContain(`can be written by other users (mode 0777)`);
    expect((error as Error).message).toContain(`chmod 700 ${dataDir}`);
    // Nothing was written into it.
    expect(readdirSync(dataDir)).toEqual([]);

    // The CLI says so in one line and exits 1, without a stack trace.
    const run = await runKopek(undefined, { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, 'migrate');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`chmod 700 ${dataDir}`);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.output).not.toMatch(/\n\s+at /);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('refuses a DATA_DIR that belongs to another user', async () => {
    const uid = process.getuid?.();
    if (uid !== 0) return; // only root can give a directory away
    const dataDir = join(tempDir(), 'theirs');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, 54_321, 54_321);
    const error = await serveOn(dataDir).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DataDirUnsafeError);
    expect((error as Error).message).toContain('belongs to another user (uid 54321)');
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
