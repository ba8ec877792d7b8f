/**
 * `kopek serve`: the API, hosted pages and gateway, with the background work beside them, until a
 * signal stops the process. Loaded by the CLI only for this command.
 */

import { createLogger, serveRuntime, startRuntime } from '../compose/runtime.js';
import type { Config } from '../config.js';
import type { StoreDeps } from '../control/commands.js';
import { holdDataDir } from '../control/server.js';
import { printAfterLog } from '../http/logger.js';
import type { CliIo } from './context.js';
import { sandboxOnFirstStart, startUpBanner } from './start-up.js';

export async function serve(config: Config, io: CliIo): Promise<void> {
  const log = createLogger(config);
  // The embedded store is this process's alone; CLI commands reach it through the control socket.
  const held = config.databaseUrl ? undefined : await holdDataDir(config.dataDir, log);
  const runtime = await startRuntime(config, log, held?.lock);
  const deps: StoreDeps = {
    ...runtime.services,
    publicUrl: config.publicUrl,
    forgetShop: (id: number) => runtime.app.shopAuthenticator.forget(id),
  };
  const first = await sandboxOnFirstStart(deps);
  // Only now: a `kopek shop create` that arrives during the first start must not take the sandbox's place.
  held?.ready(deps);
  const serving = await serveRuntime(runtime, config, held?.close);
  // Before the banner: whoever waits for it (a supervisor, a test) may stop the server right away.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    try {
      await serving.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Started through npm (`npx kopek serve`), this process sits under a shell that npm's forwarded
  // SIGTERM kills without passing it on: the server goes when that parent does, instead of living on
  // as an orphan that still holds the store.
  if (process.env.npm_lifecycle_event) {
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) void shutdown('parent exited');
    }, 500).unref();
  }
  // In one write, after what the start logged (through the logger's destination: JSON lines go out
  // asynchronously): whoever reads the banner (a person, a supervisor, a test) sees it whole, with
  // no log line in it or after it that the start wrote before it.
  printAfterLog(log, startUpBanner(config, runtime.db.kind, first, serving.metricsPort), io.out);
}
