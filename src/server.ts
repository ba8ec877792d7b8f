import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Keyring } from './crypto/keyring.js';
import { resolveKeyring } from './crypto/master-key.js';
import type { DataDirLock } from './db/data-dir-lock.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { openDb } from './db/open.js';
import { type App, buildApp } from './http/app.js';
import { pinoOptions } from './http/logger.js';
import { DeliveryWake, wakingStore } from './notifications/wake.js';

export interface Runtime {
  app: App;
  db: Db;
  masterKey: Keyring;
  log: FastifyBaseLogger;
  /** Told whenever this process commits a notification due now (the store is seen through it). */
  wake: DeliveryWake;
}

export function createLogger(config: Config): FastifyBaseLogger {
  return pino(pinoOptions(config.logLevel));
}

/**
 * Opens the store, applies migrations and builds the app: what `kopek serve` runs before listening.
 * `lock` is the DATA_DIR lock when the caller already took it for the embedded store.
 */
export async function startRuntime(
  config: Config,
  log = createLogger(config),
  lock?: DataDirLock,
): Promise<Runtime> {
  const { keyring: masterKey, generatedAt } = resolveKeyring(config);
  if (generatedAt)
    log.warn({ file: generatedAt }, 'generated a master key for the embedded store; back this file up');
  const opened = await openDb(config, lock);
  const wake = new DeliveryWake();
  const db = wakingStore(opened, wake);
  try {
    const applied = await migrate(db);
    if (applied.length > 0) log.info({ migrations: applied }, 'applied migrations');
    const app = await buildApp({ config, db, clock: systemClock, masterKey, logger: log });
    return { app, db, masterKey, log, wake };
  } catch (err) {
    await db.close();
    throw err;
  }
}
