import { type ChildProcess, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, KOPEK, start } from '../foundation/kopek-process.js';
import { freshPostgresUrl, seedPgliteDir } from '../fresh-store.js';

/**
 * A second Kopek process (`kopek serve`) as a separate gateway deployment for the HTTP client's tests:
 * its own port and its own store (embedded, or a PostgreSQL database of its own when DATABASE_URL is
 * set), as a gateway deployment has. Never the tests' shared store: its background loops (delivery,
 * e-mail, expiry sweeps) would act on the other tests' rows, e.g. claim another test's notifications
 * and fail them at once, its loopback receivers being outside its outbound rules.
 */

const run = promisify(execFile);
const CLI = KOPEK;
const START_LIMIT_MS = 90_000;

export function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

export { freePort };

export interface GatewayProcess {
  url: string;
  shopId: number;
  secret: string;
  token: string;
  output: () => string;
  stop: () => Promise<void>;
}

export interface GatewayProcessOptions {
  masterKey: string;
  threeDs?: boolean;
}

/** Creates the shop with the CLI, starts `serve`, and waits until /health answers. */
export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const shopId = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);
  const secret = randomBytes(32).toString('hex');
  const token = randomBytes(32).toString('hex');
  const dataDir = await mkdtemp(join(tmpdir(), 'kopek-gateway-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'GATEWAY_URL', 'CHECKOUT_URL', 'DATA_DIR']) delete env[name];
  Object.assign(env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: url,
    GATEWAY_TOKEN: token,
    KOPEK_MASTER_KEY: options.masterKey,
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    // The gateway deployment bills nothing: subscriptions are the API deployment's.
    BILLING: 'off',
  });
  // A database of the run's (dropped at its end), cloned from the migrated template.
  if (process.env.DATABASE_URL) env.DATABASE_URL = await freshPostgresUrl();
  // Its embedded store as a first start's migrations leave it (the run's migrated template): the
  // CLI's `shop create` then skips creating the cluster and migrating it, seconds of both cores.
  else await seedPgliteDir(join(dataDir, 'pglite'));

  const flags = ['--id', String(shopId), '--secret', secret, '--test', ...(options.threeDs ? ['--3ds'] : [])];
  await run('node', [...CLI, 'shop', 'create', ...flags], { env, timeout: 60_000 });

  const server = start('node', [...CLI, 'serve'], env);
  const { child } = server;
  // Should the test run itself be killed before its afterAll, the server must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await server.exited;
      clearTimeout(forced);
    }
    process.off('exit', killOnExit);
    await rm(dataDir, { recursive: true, force: true });
  };

  try {
    // Its banner says it is listening: /health is asked once it is out, not on a timer before.
    await server.untilOutput('the banner', (output) => output.includes('Kopek is running'), START_LIMIT_MS);
    await waitForHealth(url, child);
  } catch (err) {
    await stop();
    throw new Error(`the second Kopek process did not start: ${(err as Error).message}\n${server.output()}`);
  }
  return { url, shopId, secret, token, output: server.output, stop };
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + START_LIMIT_MS;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`it exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no answer from ${url}/health within ${START_LIMIT_MS / 1000} s`);
}

/** A local HTTP server that answers every request with `answer`, or never when it is undefined. */
export async function fakeGateway(answer?: (res: import('node:http').ServerResponse) => void): Promise<{
  url: string;
  requests: () => number;
  /** The headers of the last request. */
  headers: () => import('node:http').IncomingHttpHeaders | undefined;
  close: () => Promise<void>;
}> {
  let count = 0;
  let last: import('node:http').IncomingHttpHeaders | undefined;
  const server = createServer((req, res) => {
    count++;
    last = req.headers;
    req.resume();
    if (answer) answer(res);
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    headers: () => last,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Presses "Pass authentication" on a 3-D Secure page over HTTP, with the CSRF token of its form (and any cookie it set). */
export async function passOnPage(url: string): Promise<Response> {
  const page = await fetch(url);
  const cookie =
    page.headers
      .getSetCookie()
      .find((c) => c.startsWith('kopek_csrf='))
      ?.split(';')[0] ?? '';
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: token, outcome: 'passed' }).toString(),
    redirect: 'manual',
  });
}
