/**
 * `kopek serve`: the API, hosted pages and gateway, with the background work beside them, until a
 * signal stops the process. Loaded by the CLI only for this command.
 */
import { billingMetrics, startBilling } from '../billing/scheduler.js';
import { startCabinetPurge } from '../cabinet/sessions.js';
import { startCheckoutExpirySweep } from '../checkout/expiry.js';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { holdDataDir } from '../control/server.js';
import { closeGatewayPools } from '../gateway/http-client.js';
import { startFingerprintSweep } from '../gateway/sweep.js';
import { startIdempotencyPurge } from '../http/idempotency.js';
import { startMetricsListener } from '../http/metrics.js';
import { mailMetrics, startMail } from '../mail/scheduler.js';
import { closeNotificationAgents } from '../notifications/post.js';
import { notificationMetrics, startDelivery } from '../notifications/scheduler.js';
import { closeSigner } from '../notifications/signer.js';
import { createLogger, startRuntime } from '../server.js';
import type { CliIo } from './context.js';
import { sandboxOnFirstStart, startUpBanner } from './start-up.js';

export async function serve(config: Config, io: CliIo): Promise<void> {
  const log = createLogger(config);
  // The embedded store is this process's alone; CLI commands reach it through the control socket.
  const held = config.databaseUrl ? undefined : await holdDataDir(config.dataDir, log);
  const { app, db, masterKey, wake } = await startRuntime(config, log, held?.lock);
  const deps = {
    db,
    clock: systemClock,
    masterKey,
    publicUrl: config.publicUrl,
    config,
    log,
    forgetShop: (id: number) => app.shopAuthenticator.forget(id),
  };
  const first = await sandboxOnFirstStart(deps);
  // Only now: a `kopek shop create` that arrives during the first start must not take the sandbox's place.
  held?.ready(deps);
  await app.listen({ port: config.port, host: config.host });
  const metrics = await startMetricsListener(app.metrics, config, log);
  const stopSweep = startFingerprintSweep({ db, clock: systemClock, log });
  const stopPurge = startIdempotencyPurge({ db, clock: systemClock, log });
  const stopExpiry = startCheckoutExpirySweep({ db, clock: systemClock, config, log });
  const stopCabinetPurge = startCabinetPurge({ db, clock: systemClock, log });
  const stopBilling = config.billing
    ? startBilling(deps, config.billingIntervalMs, billingMetrics(app.metrics, deps))
    : undefined;
  // Always on: without SMTP_URL it still turns events into the e-mails kept for shops to read.
  const stopMail = startMail(deps, config.mailIntervalMs, mailMetrics(app.metrics, deps));
  const stopDelivery = config.notifications
    ? startDelivery(deps, config.notifyIntervalMs, notificationMetrics(app.metrics, deps), wake)
    : undefined;
  // Before the banner: whoever waits for it (a supervisor, a test) may stop the server right away.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    try {
      stopSweep();
      stopPurge();
      stopExpiry();
      stopCabinetPurge();
      // Together: deliveries on their way may take up to their timeout to finish.
      await Promise.all([stopBilling?.(), stopDelivery?.(), stopMail()]);
      await held?.close();
      await metrics?.close();
      await app.close();
      await closeGatewayPools();
      await closeNotificationAgents();
      await closeSigner();
      await db.close();
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
  // One write: whoever reads the banner (a supervisor, a test) never sees half of it.
  io.out(startUpBanner(config, db.kind, first, metrics?.port));
}
