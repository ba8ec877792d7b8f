/**
 * A serving process's life: the store opened and migrated, the app built, then listening with the
 * background work beside it, until stop() ends it all in order. `kopek serve` (src/cli/serve.ts) owns
 * only what is the process's own business around it: the control socket, signals and the banner.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Counter } from 'prom-client';
import { billingMetrics, startBilling } from '../billing/scheduler.js';
import { startCabinetPurge } from '../cabinet/sessions.js';
import { startCheckoutExpirySweep } from '../checkout/expiry.js';
import type { Config } from '../config.js';
import type { Services } from '../context.js';
import type { DataDirLock } from '../db/data-dir-lock.js';
import type { Db } from '../db/db.js';
import { startStatistics } from '../db/statistics.js';
import { closeGatewayPools } from '../gateway/http-client.js';
import { startFingerprintSweep } from '../gateway/sweep.js';
import { startIdempotencyPurge } from '../http/idempotency.js';
import { startMetricsListener } from '../http/metrics.js';
import { mailMetrics, startMail } from '../mail/scheduler.js';
import { closeNotificationAgents } from '../notifications/post.js';
import { notificationMetrics, startDelivery } from '../notifications/scheduler.js';
import { closeSigner } from '../notifications/signer.js';
import { DeliveryWake, wakingStore } from '../notifications/wake.js';
import { type App, buildApp } from './app.js';
import { idleCompactor, processProbe } from './idle-memory.js';
import { buildServices, createLogger } from './services.js';

export { createLogger } from './services.js';

export interface Runtime {
  app: App;
  db: Db;
  /** What the background work and the CLI's store commands run with (the app's requests see the same). */
  services: Services;
  /** Told whenever this process commits a notification due now (the store is seen through it). */
  wake: DeliveryWake;
}

/**
 * Opens the store, applies migrations and builds the app: what `kopek serve` runs before listening.
 * `lock` is the DATA_DIR lock when the caller already took it for the embedded store.
 */
export async function startRuntime(
  config: Config,
  log: FastifyBaseLogger = createLogger(config),
  lock?: DataDirLock,
): Promise<Runtime> {
  const wake = new DeliveryWake();
  const built = await buildServices(config, {
    log,
    migrate: true,
    wrapStore: (db) => wakingStore(db, wake),
    ...(lock ? { lock } : {}),
  });
  if (built.generatedKeyAt)
    log.warn(
      { file: built.generatedKeyAt },
      'generated a master key for the embedded store; back this file up',
    );
  if (built.applied.length > 0) log.info({ migrations: built.applied }, 'applied migrations');
  // Statements unprepared is the setting for a pooler in transaction mode, which would hand the key
  // locks' session to other clients: they need PostgreSQL itself.
  if (config.databaseUrl && !config.databasePrepare && !config.databaseDirectUrl)
    log.warn(
      'DATABASE_PREPARE is false, as for a pooler in transaction mode: set DATABASE_DIRECT_URL to PostgreSQL itself, or requests with the same Idempotency-Key are not kept apart across instances (see docs/operations.md)',
    );
  // An older instance during a rolling upgrade (or after a roll-back): it runs, and says so.
  if (built.newer.length > 0)
    log.warn(
      { migrations: built.newer },
      'the database schema has migrations of a newer Kopek release; this instance runs on it as it is, until it is upgraded',
    );
  const { services } = built;
  try {
    const app = await buildApp(services);
    return { app, db: services.db, services, wake };
  } catch (err) {
    await built.close();
    throw err;
  }
}

export interface Serving {
  /** The port of the separate metrics listener, when METRICS_PORT opens one. */
  metricsPort?: number;
  /** Ends the background work, lets requests in flight finish, and closes the store. */
  stop(): Promise<void>;
}

/**
 * Listens, and starts the background work beside the API: sweeps and purges, billing, e-mail and
 * notification delivery, as the configuration turns them on. `closeControl` closes what the caller
 * holds beside the store (the control socket) once no background work can use the store any more.
 */
export async function serveRuntime(
  runtime: Runtime,
  config: Config,
  closeControl?: () => Promise<void>,
): Promise<Serving> {
  const { app, db, wake, services: deps } = runtime;
  const { log } = deps;
  await app.listen({ port: config.port, host: config.host });
  const metrics = await startMetricsListener(app.metrics, config, log);
  const stopSweep = startFingerprintSweep(deps);
  const stopPurge = startIdempotencyPurge(deps);
  const stopExpiry = startCheckoutExpirySweep(deps);
  const stopCabinetPurge = startCabinetPurge(deps);
  const stopStatistics = await startStatistics(deps);
  const stopBilling = config.billing
    ? startBilling(deps, config.billingIntervalMs, billingMetrics(app.metrics, deps))
    : undefined;
  // Always on: without SMTP_URL it still turns events into the e-mails kept for shops to read.
  const stopMail = startMail(deps, config.mailIntervalMs, mailMetrics(app.metrics, deps));
  const stopDelivery = config.notifications
    ? startDelivery(deps, config.notifyIntervalMs, notificationMetrics(app.metrics, deps), wake)
    : undefined;
  const stopCompactor = idleCompactor(processProbe(app.server), {
    onCompaction: compactionMetric(app.metrics),
  }).start();
  const stop = async () => {
    stopCompactor();
    stopSweep();
    stopPurge();
    stopExpiry();
    stopCabinetPurge();
    stopStatistics();
    // Together: deliveries on their way may take up to their timeout to finish.
    await Promise.all([stopBilling?.(), stopDelivery?.(), stopMail()]);
    await closeControl?.();
    await metrics?.close();
    await app.close();
    await closeGatewayPools();
    await closeNotificationAgents();
    await closeSigner();
    // The limits' connection (Redis), if any; then the store.
    await deps.limits?.close();
    await db.close();
  };
  return { ...(metrics ? { metricsPort: metrics.port } : {}), stop };
}

/** Counts the idle compactions (idle-memory.ts). */
function compactionMetric(registry: App['metrics']): () => void {
  const count = new Counter({
    name: 'kopek_idle_compactions_total',
    help: 'Full garbage collections run because the process had been idle for a while and had grown',
    registers: [registry],
  });
  return () => count.inc();
}
