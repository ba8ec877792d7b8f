import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKopek } from '../cli/run-cli.js';
import {
  alive,
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  type Started,
  seededDataDir,
  start,
  waitFor,
  waitForBanner,
} from './kopek-process.js';

// These tests start real processes on the embedded store: one per DATA_DIR must be the rule.
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kopek-store-'));
  dirs.push(dir);
  return dir;
}

// One store for the tests that need a server or a migrated store, used by one process after another,
// made from the run's migrated template: a fresh store would cost a first start its migrations.
let storeDir: string;
beforeAll(async () => {
  storeDir = await seededDataDir('kopek-store-');
  dirs.push(storeDir);
});

afterAll(() => {
  cleanUp();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function lockOf(dir: string): { pid: number; socket?: string } | undefined {
  const file = join(dir, 'kopek.lock');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** A pid that belonged to a process and no longer does. */
async function deadPid(): Promise<number> {
  const s = start(process.execPath, ['-e', ''], process.env);
  await s.exited;
  return s.child.pid as number;
}

async function get(url: string, auth: string): Promise<number> {
  const res = await fetch(url, {
    headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
  });
  await res.arrayBuffer();
  return res.status;
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

// The server is the real process; the CLI runs in this process and reaches it as `kopek` does, through
// the control socket in DATA_DIR.
describe('a running server and the CLI on one embedded store', { timeout: 180_000, ...EMBEDDED_ONLY }, () => {
  let dir: string;
  let port: number;
  let env: NodeJS.ProcessEnv;
  let server: Started;
  let auth: string;

  beforeAll(async () => {
    dir = storeDir;
    port = await freePort();
    env = embeddedEnv(dir, port);
    server = start(process.execPath, ['bin/kopek.js', 'serve'], env);
    await waitForBanner(server);
  }, 120_000);

  it('the server bin/kopek.js started answers GET /health', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('shop create goes through the server: the running server accepts the new key', async () => {
    const run = await runKopek(undefined, env, 'shop', 'create', '--3ds', '--test');
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Shop id:\s+2 \(test\) \(3-D Secure on\)/);
    const curl = run.output.match(/curl -u (\d+:[0-9a-f]{64}) /);
    expect(curl, run.output).not.toBeNull();
    auth = curl?.[1] as string;
    expect(run.output).toContain(`http://127.0.0.1:${port}/customers`);
    expect(await get(`http://127.0.0.1:${port}/customers`, auth)).toBe(200);
  });

  it('shop list and migrate go through the server too', async () => {
    const listed = await runKopek(undefined, env, 'shop', 'list');
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toMatch(/^1\tSandbox shop\t\(test\)\tcreated /m);
    expect(listed.output).toMatch(/^2\tSandbox shop\t\(test, 3ds\)\tcreated /m);
    const migrated = await runKopek(undefined, env, 'migrate');
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toContain('Nothing to apply; the schema is up to date.');
  });

  it('clock advance goes through the server, which sees the new time at once', async () => {
    const run = await runKopek(undefined, env, 'clock', 'advance', '--shop', '2', '--by', 'P1D');
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/^Shop 2 test clock: \S+Z \(time zone UTC\), 1 day ahead of real time$/m);
    const res = await fetch(`http://127.0.0.1:${port}/test_clock`, {
      headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
    });
    const { test_clock } = (await res.json()) as { test_clock: { offset_seconds: number } };
    expect(Math.abs(test_clock.offset_seconds - 86_400)).toBeLessThan(60);
  });

  it('a second server on the same DATA_DIR is refused, and the first keeps the store', async () => {
    const holder = lockOf(dir);
    expect(holder?.pid).toBe(server.child.pid);
    const second = start(process.execPath, [...KOPEK, 'serve'], embeddedEnv(dir, await freePort()));
    const { code } = await second.exited;
    expect(code).toBe(3);
    expect(second.output()).toContain(
      `The embedded store in ${dir} is in use by process ${server.child.pid}`,
    );
    expect(lockOf(dir)).toEqual(holder);
    expect(await get(`http://127.0.0.1:${port}/customers`, auth)).toBe(200);
  });

  it('after a restart the shop is still there', async () => {
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(lockOf(dir)).toBeUndefined();
    server = start(process.execPath, [...KOPEK, 'serve'], env);
    await waitForBanner(server);
    expect(await get(`http://127.0.0.1:${port}/customers`, auth)).toBe(200);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});

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
    const script = `
      import { existsSync } from 'node:fs';
      import { DataDirLock, tryLockDataDir } from './dist/db/data-dir-lock.js';
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
    const said = (word: RegExp) => racers.every((r) => word.test(r.output()));
    await waitFor('every racer to be ready', () => said(/ready/));
    writeFileSync(go, '');
    await waitFor('every racer to try', () => said(/won|lost/));
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

// The three start at once, each on a copy of the file's store: a first start would spend seconds
// creating one, and one after the other they would wait for each other's start-up.
describe('stopping a server started through npm', {
  timeout: 120_000,
  concurrent: true,
  ...EMBEDDED_ONLY,
}, () => {
  function storeCopy(): string {
    const dir = tempDir();
    for (const name of ['pglite', 'master.key'])
      cpSync(join(storeDir, name), join(dir, name), { recursive: true });
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
