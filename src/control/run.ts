import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config.js';
import type { MasterKeys } from '../crypto/keyring.js';
import { DataDirBusyError, DataDirLock, tryLockDataDir } from '../db/data-dir-lock.js';
import type { Db } from '../db/db.js';
import { askServer, unwrapAnswer } from './client.js';
import type { StoreCommand, StoreCommandName, StoreDeps, StoreInput, StoreResult } from './commands.js';

// A server opens its control socket right after taking the lock, so one that refuses connections for
// this long is not a running Kopek server.
const SERVER_PATIENCE_MS = 2_000;
// A CLI command holding DATA_DIR (it has no socket) is done within seconds.
const COMMAND_PATIENCE_MS = 15_000;

/**
 * A store that is open already, with what commands on it work with: a command runs on it as it is
 * (no lock, no migration), and the store stays open afterwards. Tests run the CLI this way.
 */
export interface OpenStore {
  db: Db;
  masterKey: MasterKeys;
  clock?: Clock;
  log?: FastifyBaseLogger;
  /** Called when a command changed a shop's row, as a server holding the store does. */
  forgetShop?: (shopId: number) => void;
  /** Makes shops' signing key pairs (tests hand out pairs made once for the run). */
  signingKeys?: StoreDeps['signingKeys'];
}

/**
 * What a command answers on an embedded store that was never created: `kopek shop list` in a fresh
 * DATA_DIR lists nothing, without creating a store (which takes seconds) to find that out.
 */
const WITHOUT_STORE: { [N in StoreCommandName]?: () => StoreResult<N> } = {
  'shop list': () => [],
};

/**
 * Runs a store command in this process, or, when a server holds the embedded store, in that server
 * through its control socket: two processes must never open one PGlite directory. With `open`, it
 * runs on that store instead.
 */
export async function runStoreCommand<N extends StoreCommandName>(
  config: Config,
  name: N,
  input: StoreInput<N>,
  /** Told how a long command gets on, when it runs in this process. */
  progress?: (text: string) => void,
  open?: OpenStore,
): Promise<StoreResult<N>> {
  if (open) return runOn(open, config, name, input, progress);
  if (config.databaseUrl) return runHere(config, undefined, name, input, progress);
  const started = performance.now();
  for (;;) {
    const got = await tryLockDataDir(config.dataDir, { command: `kopek ${name}` });
    if (got instanceof DataDirLock) {
      const answer = WITHOUT_STORE[name];
      if (answer && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'))) {
        got.release();
        return answer() as StoreResult<N>;
      }
      return runHere(config, got, name, input, progress);
    }
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

// The store and the commands are loaded only by the commands that open a store here: a command that
// a server answers, or one that finds no store, starts in a fraction of a second.
async function runHere<N extends StoreCommandName>(
  config: Config,
  lock: DataDirLock | undefined,
  name: N,
  input: StoreInput<N>,
  progress?: (text: string) => void,
): Promise<StoreResult<N>> {
  // Built as a server builds its services; `kopek migrate` applies the migrations itself, and the
  // lookup keys live in a table that may not exist before it has.
  const { buildServices } = await import('../compose/services.js');
  const built = await buildServices(config, {
    migrate: name !== 'migrate',
    lookupKeys: name !== 'migrate',
    ...(lock ? { lock } : {}),
  });
  try {
    return await runOn(built.services, config, name, input, progress);
  } finally {
    await built.close();
  }
}

async function runOn<N extends StoreCommandName>(
  open: OpenStore,
  config: Config,
  name: N,
  input: StoreInput<N>,
  progress?: (text: string) => void,
): Promise<StoreResult<N>> {
  const [{ storeCommands }, log] = await Promise.all([
    import('./commands.js'),
    open.log ?? commandLog(config),
  ]);
  const deps: StoreDeps = {
    db: open.db,
    clock: open.clock ?? systemClock,
    masterKey: open.masterKey,
    publicUrl: config.publicUrl,
    config,
    log,
    ...(open.forgetShop ? { forgetShop: open.forgetShop } : {}),
    ...(open.signingKeys ? { signingKeys: open.signingKeys } : {}),
    ...(progress ? { progress } : {}),
  };
  const command = storeCommands[name] as unknown as StoreCommand<StoreInput<N>, StoreResult<N>>;
  return await command.run(deps, input);
}

async function commandLog(config: Config): Promise<FastifyBaseLogger> {
  const { stdoutLogger } = await import('../http/logger.js');
  return stdoutLogger(config.logLevel, config.logFormat) as FastifyBaseLogger;
}
