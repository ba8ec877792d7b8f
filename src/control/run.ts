import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { openKeyring } from '../crypto/lookup-keys.js';
import { resolveKeyring } from '../crypto/master-key.js';
import { DataDirBusyError, DataDirLock, tryLockDataDir } from '../db/data-dir-lock.js';
import { migrate } from '../db/migrate.js';
import { openDb } from '../db/open.js';
import { pinoOptions } from '../http/logger.js';
import { askServer, unwrapAnswer } from './client.js';
import {
  type StoreCommand,
  type StoreCommandName,
  type StoreDeps,
  type StoreInput,
  type StoreResult,
  storeCommands,
} from './commands.js';

// A server opens its control socket right after taking the lock, so one that refuses connections for
// this long is not a running Kopek server.
const SERVER_PATIENCE_MS = 2_000;
// A CLI command holding DATA_DIR (it has no socket) is done within seconds.
const COMMAND_PATIENCE_MS = 15_000;

/**
 * Runs a store command in this process, or, when a server holds the embedded store, in that server
 * through its control socket: two processes must never open one PGlite directory.
 */
export async function runStoreCommand<N extends StoreCommandName>(
  config: Config,
  name: N,
  input: StoreInput<N>,
  /** Told how a long command gets on, when it runs in this process. */
  progress?: (text: string) => void,
): Promise<StoreResult<N>> {
  if (config.databaseUrl) return runHere(config, undefined, name, input, progress);
  const started = performance.now();
  for (;;) {
    const got = await tryLockDataDir(config.dataDir, { command: `kopek ${name}` });
    if (got instanceof DataDirLock) return runHere(config, got, name, input, progress);
    if (got.socket !== undefined) {
      const answer = await askServer(got.socket, { command: name, input });
      if (answer) return unwrapAnswer(answer) as StoreResult<N>;
    }
    const patience = got.socket !== undefined ? SERVER_PATIENCE_MS : COMMAND_PATIENCE_MS;
    if (performance.now() - started > patience) {
      throw new DataDirBusyError(
        config.dataDir,
        got,
        got.socket !== undefined
          ? `it does not answer on its control socket ${got.socket}, so nothing was changed. Try again once it is running, or stop it.`
          : 'nothing was changed. Try again when it has finished.',
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function runHere<N extends StoreCommandName>(
  config: Config,
  lock: DataDirLock | undefined,
  name: N,
  input: StoreInput<N>,
  progress?: (text: string) => void,
): Promise<StoreResult<N>> {
  const db = await openDb(config, lock);
  try {
    if (name !== 'migrate') await migrate(db);
    const { keyring } = resolveKeyring(config);
    const deps: StoreDeps = {
      db,
      clock: systemClock,
      masterKey: name === 'migrate' ? keyring : await openKeyring(db, keyring),
      publicUrl: config.publicUrl,
      config,
      log: pino(pinoOptions(config.logLevel)) as FastifyBaseLogger,
      ...(progress ? { progress } : {}),
    };
    const command = storeCommands[name] as unknown as StoreCommand<StoreInput<N>, StoreResult<N>>;
    return await command.run(deps, input);
  } finally {
    await db.close();
  }
}
