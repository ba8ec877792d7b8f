import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { expect } from 'vitest';
import {
  alive,
  cleanUp,
  embeddedEnv,
  freePort,
  lockOf,
  seededDataDir,
  start,
  waitFor,
  waitForBanner,
} from './kopek-process.js';

/**
 * A server started the way a user starts it through npm (`npm start`, `npx kopek serve`), stopped by
 * a signal to the process the user started (npm-start.test.ts, npx-serve.test.ts).
 */

const dirs: string[] = [];

/** In afterAll: every process the file started killed, every DATA_DIR it made removed. */
export function cleanUpServers(): void {
  cleanUp();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

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

/**
 * The process a user starts is the one that stops: nothing may stay behind holding the store. Each
 * server has a DATA_DIR of its own, seeded with a migrated store (a first start would spend seconds
 * creating and migrating one).
 */
export async function stopsEverything(command: string, args: string[], signal: NodeJS.Signals) {
  const dir = await seededDataDir('kopek-store-');
  dirs.push(dir);
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
