import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKopek } from '../cli/run-cli.js';
import {
  cleanUp,
  EMBEDDED_ONLY,
  embeddedEnv,
  freePort,
  KOPEK,
  lockOf,
  type Started,
  seededDataDir,
  start,
  waitForBanner,
} from './kopek-process.js';

/**
 * A real `kopek serve` on the embedded store, and the CLI beside it. The DATA_DIR lock on its own is
 * data-dir-lock.test.ts; servers started through npm and stopped by a signal are npm-start.test.ts
 * and npx-serve.test.ts (each file starts processes of its own, and the files run side by side).
 */

// One store, used by one process after another, made from the run's migrated template: a fresh
// store would cost a first start its migrations.
let storeDir: string;
beforeAll(async () => {
  storeDir = await seededDataDir('kopek-store-');
});

afterAll(() => {
  cleanUp();
  rmSync(storeDir, { recursive: true, force: true });
});

async function get(url: string, auth: string): Promise<number> {
  const res = await fetch(url, {
    headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` },
  });
  await res.arrayBuffer();
  return res.status;
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
