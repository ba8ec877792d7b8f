import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BrowserServer, chromium } from 'playwright-core';

/**
 * One Chromium for a whole test run. The run's global set-up starts this broker on loopback; the
 * first browser test to ask (GET /browser) makes it launch Chromium as a Playwright browser server,
 * and every test file then connects to that one browser with a context of its own. A run without
 * browser tests never starts Chromium.
 */

/**
 * Debian's old headless shell (package chromium-headless-shell) when it is installed, else Debian's
 * chromium. Both are the same Blink and V8 release; the shell leaves out the browser's windowing and
 * UI layers, and the browser tests take about half the CPU with it (payments in the cabinet: 15 s
 * against 27.5 s of test time). `KOPEK_TEST_CHROMIUM=/usr/bin/chromium` runs them in the full browser.
 */
export const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const FULL_CHROMIUM = '/usr/bin/chromium';

export function chromiumPath(env: NodeJS.ProcessEnv = process.env, exists = existsSync): string {
  if (env.KOPEK_TEST_CHROMIUM) return env.KOPEK_TEST_CHROMIUM;
  return exists(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM;
}

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  // Compositing in the browser's process, not a GPU process of its own: no IPC per frame between
  // them (the GPU process took 15 s of CPU in a run of the suite; two browser files ran 7 % faster).
  '--in-process-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserBroker {
  /** Where test files ask for the browser's endpoint. */
  url: string;
  close(): Promise<void>;
}

export async function startBrowserBroker(): Promise<BrowserBroker> {
  let launched: Promise<BrowserServer> | undefined;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/browser') {
      res.writeHead(404).end();
      return;
    }
    const executablePath = chromiumPath();
    if (!existsSync(executablePath)) {
      res
        .writeHead(503, { 'content-type': 'text/plain' })
        .end(
          `Chromium is not installed at ${executablePath}; the browser tests need it: apt-get update && apt-get install -y chromium chromium-headless-shell`,
        );
      return;
    }
    launched ??= chromium.launchServer({ executablePath, args: ARGS });
    launched.then(
      (browser) => res.writeHead(200, { 'content-type': 'text/plain' }).end(browser.wsEndpoint()),
      (err: unknown) => {
        launched = undefined;
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/browser`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      const browser = await launched?.catch(() => undefined);
      await browser?.close();
    },
  };
}

/** The run's browser: asks the broker (whose address the global set-up provides) and connects. */
export async function endpointOf(brokerUrl: string | undefined): Promise<string> {
  if (!brokerUrl) throw new Error('no browser broker: the tests run without test/global-setup.ts');
  const res = await fetch(brokerUrl);
  const text = await res.text();
  if (!res.ok) throw new Error(text);
  return text;
}
