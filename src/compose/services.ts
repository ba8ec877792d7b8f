/**
 * The one place the services every verb receives are built from configuration: `kopek serve`, the
 * CLI's store commands, the test harness and the benchmarks' workers all start here, so they run on
 * the same store, keys, clock and logger as a server would.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config.js';
import type { Services } from '../context.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import { openKeyring } from '../crypto/lookup-keys.js';
import { resolveKeyring } from '../crypto/master-key.js';
import { checkKeysOpenStore } from '../crypto/rotate.js';
import type { DataDirLock } from '../db/data-dir-lock.js';
import type { Db } from '../db/db.js';
import { prepareSchema } from '../db/migrate.js';
import { stdoutLogger } from '../http/logger.js';
import type { LimitStore } from '../limits/store.js';
import type { OutboundNet } from '../net/outbound.js';
import { openLimitStore } from './limits.js';
import { openDb } from './store.js';

/** What a caller brings instead of what the configuration names (tests bring most of it). */
export interface ServiceOverrides {
  /** A store open already: used as it is and left open by close(). Without it, the configured store. */
  db?: Db;
  /** The DATA_DIR lock the caller took already for the embedded store; closing the store releases it. */
  lock?: DataDirLock;
  /** How the services see the store they opened (the server's delivery wake, a benchmark's counter). */
  wrapStore?: (db: Db) => Db;
  /**
   * Applies pending migrations first (db/migrate.ts, prepareSchema: none pending, the store is not
   * changed). Default: when the store is opened here.
   */
  migrate?: boolean;
  /** Loads the lookup keys from the store (crypto/lookup-keys.ts). Default true; `kopek migrate` skips it. */
  lookupKeys?: boolean;
  /**
   * Refuses master keys that open none of the values sealed in the store (default true, with the
   * lookup keys). Only a store holding values under several unrelated keys on purpose turns it off:
   * the test harness's shared PostgreSQL store, where each test worker seals under a key of its own.
   */
  keyCheck?: boolean;
  clock?: Clock;
  /** Where the limits count; without it, the configured place (compose/limits.ts), closed by close(). */
  limits?: LimitStore;
  /** The master keys; without them, the configured ones (or DATA_DIR's key file). */
  masterKey?: MasterKeys;
  log?: FastifyBaseLogger;
  outbound?: OutboundNet;
  /** Makes the RSA pairs of shops' notification signing keys; without it, a fresh pair each time. */
  signingKeys?: Services['signingKeys'];
}

export interface BuiltServices {
  services: Services;
  /** Closes the store if it was opened here, which releases the DATA_DIR lock. */
  close(): Promise<void>;
  /** The migrations applied on the way (none unless asked to migrate). */
  applied: string[];
  /** When asked to migrate: the migrations of a newer release the store has, which this one runs on. */
  newer: string[];
  /** The master key file generated on the way: the first start of an embedded store. */
  generatedKeyAt?: string;
}

/** Every Kopek logger: the server's, the CLI's, a benchmark worker's. */
export function createLogger(config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat'>>): Logger {
  return stdoutLogger(config.logLevel, config.logFormat);
}

/**
 * Builds the services from `config`, with whatever `overrides` brings instead. It logs nothing: what
 * it did (migrations, a generated key) is the caller's to report, since a CLI command prints plain text.
 */
export async function buildServices(
  config: Config,
  overrides: ServiceOverrides = {},
): Promise<BuiltServices> {
  const { lock } = overrides;
  let keys = overrides.masterKey;
  let generatedKeyAt: string | undefined;
  let opened: Db | undefined;
  try {
    // The keys first: a wrong or unreadable key stops the start before the store is touched.
    if (keys === undefined) {
      const resolved = resolveKeyring(config);
      keys = resolved.keyring;
      generatedKeyAt = resolved.generatedAt;
    }
    if (!overrides.db) opened = await openDb(config, lock);
  } catch (err) {
    // The lock is released with the store; one that was never opened releases it here.
    if (!opened) lock?.release();
    throw err;
  }
  const given = overrides.db ?? (opened as Db);
  const db = overrides.wrapStore ? overrides.wrapStore(given) : given;
  const limits = overrides.limits ?? openLimitStore(config, db);
  const close = async () => {
    try {
      if (!overrides.limits) await limits.close();
    } finally {
      if (opened) await db.close();
    }
  };
  try {
    const { applied, newer } =
      (overrides.migrate ?? opened !== undefined) ? await prepareSchema(db) : { applied: [], newer: [] };
    let masterKey = keys;
    if (overrides.lookupKeys !== false) {
      const ring = keyringOf(keys);
      // A mistyped KOPEK_MASTER_KEY stops the start here: otherwise this process would seal new cards
      // and secrets under a key no other instance holds, and derive card stamps that match no others.
      if (overrides.keyCheck !== false) await checkKeysOpenStore(db, ring);
      masterKey = await openKeyring(db, ring);
    }
    const services: Services = {
      db,
      clock: overrides.clock ?? systemClock,
      config,
      limits,
      masterKey,
      log: overrides.log ?? createLogger(config),
      ...(overrides.outbound ? { outbound: overrides.outbound } : {}),
      ...(overrides.signingKeys ? { signingKeys: overrides.signingKeys } : {}),
    };
    return { services, close, applied, newer, ...(generatedKeyAt ? { generatedKeyAt } : {}) };
  } catch (err) {
    await close();
    throw err;
  }
}
