import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alive,
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  lockOf,
  seededDataDir,
  start,
  waitFor,
  waitForBanner,
} from './kopek-process.js';

/** `npm start` and `npx kopek serve` as a user runs them, stopped by a signal to what the user started. */

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-store-'));
  dirs.push(dir);
  return dir;
}

// An embedded store as a first start's migrations leave it, copied for each server.
let storeDir: string;
beforeAll(async () => {
  storeDir = await seededDataDir('kopek-store-');
  dirs.push(storeDir);
});

afterAll(() => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// The three start at once, each on a copy of the file's store: a first start would spend seconds
// creating and migrating one, and one after the other they would wait for each other's start-up.
describe('stopping a server started through npm', {
  timeout: 120_000,
  concurrent: true,
  ...EMBEDDED_ONLY,
}, () => {
  function storeCopy(): string {
    const dir = tempDir();
    cpSync(join(storeDir, 'pglite'), join(dir, 'pglite'), { recursive: true });
    return dir;
  }

  // The process a user starts is the one that stops: nothing may stay behind holding the store.
  async function stopsEverything(command: string, args: string[], signal: NodeJS.Signals) {
    const dir = storeCopy();
    const port = await freePort();
    const s = start(command, args, embeddedEnv(dir, port));
    await waitForBanner(s);
    const serverPid = lockOf(dir)?.pid as number;
    expect(alive(serverPid)).toBe(true);
    expect(serverPid).not.toBe(s.child.pid);
    s.child.kill(signal);
    await s.exited;
    await waitFor('the server to exit', () => !alive(serverPid), 10_000);
    expect(await portOpen(port)).toBe(false);
    expect(lockOf(dir), s.output()).toBeUndefined();
  }

  it('SIGTERM to `npm start` stops the server', async () => {
    await stopsEverything('npm', ['start'], 'SIGTERM');
  });

  it('so does SIGINT', async () => {
    await stopsEverything('npm', ['start'], 'SIGINT');
  });

  it('SIGTERM to `npx kopek serve` stops the server', async () => {
    await stopsEverything('npx', ['kopek', 'serve'], 'SIGTERM');
  });
});
