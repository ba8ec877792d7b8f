/**
 * `kopek keys rotate`: re-seals everything sealed with the master key under the current one, while the
 * service runs. With PostgreSQL (or KOPEK_MASTER_KEY set) the keys come from the environment: every
 * instance runs with the new KOPEK_MASTER_KEY and the old one in KOPEK_MASTER_KEY_PREVIOUS. On the
 * embedded store with its generated DATA_DIR/master.key, the command makes the new key itself, in the
 * server that holds the store when one runs.
 */
import { keyringOf } from '../crypto/keyring.js';
import { openKeyring } from '../crypto/lookup-keys.js';
import { beginDataDirRotation, endDataDirRotation, keysInDataDir } from '../crypto/master-key.js';
import {
  checkKeysOpenStore,
  DEFAULT_BATCH_SIZE,
  type RotationOptions,
  type RotationReport,
  rotateSealed,
} from '../crypto/rotate.js';
import { ShopInputError } from '../shops/index.js';
import type { StoreCommand, StoreDeps } from './store-command.js';

export interface KeysRotateInput {
  batchSize?: number;
}

export interface KeysRotated extends RotationReport {
  /** Where the keys are: the environment, or DATA_DIR's files, which the command replaced itself. */
  keys: 'environment' | 'data-dir';
  /** A new DATA_DIR key was made by this run (not when it finished a rotation begun before). */
  began: boolean;
  /** DATA_DIR's previous key was deleted: nothing is left sealed under it. */
  previousRemoved: boolean;
}

export const MAX_BATCH_SIZE = 10_000;

function parseRotateInput(raw: unknown): KeysRotateInput {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ShopInputError('keys rotate takes an object');
  const size = (raw as Record<string, unknown>).batchSize;
  if (size === undefined) return {};
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1 || size > MAX_BATCH_SIZE)
    throw new ShopInputError(`--batch-size must be a whole number from 1 to ${MAX_BATCH_SIZE}`);
  return { batchSize: size };
}

/** The rotation itself; tests pass `hooks` to stop it after a given batch. */
export async function rotateKeys(
  deps: StoreDeps,
  input: KeysRotateInput,
  hooks: Pick<RotationOptions, 'onBatch'> = {},
): Promise<KeysRotated> {
  const ring = keyringOf(deps.masterKey);
  await checkKeysOpenStore(deps.db, ring);
  // Stored before anything is re-sealed: stamps and fingerprints keep their key through the rotation.
  await openKeyring(deps.db, ring, true);
  const inDataDir = keysInDataDir(deps.config);
  const began = inDataDir && ring.previousIds.length === 0;
  if (began) {
    beginDataDirRotation(deps.config.dataDir, ring);
    deps.log.info({ key: ring.currentId, previous: ring.previousIds }, 'began a master key rotation');
  }
  // In the CLI's own process the lines are printed; in a server, logged.
  const progress =
    deps.progress ?? ((text: string) => deps.log.info({ progress: text }, 'master key rotation'));
  const report = await rotateSealed(deps.db, ring, {
    batchSize: input.batchSize ?? DEFAULT_BATCH_SIZE,
    progress,
    ...hooks,
  });
  const previousRemoved = inDataDir && report.done && report.previousKeys.length > 0;
  if (previousRemoved) endDataDirRotation(deps.config.dataDir, ring);
  if (!deps.progress)
    deps.log.info(
      { key: report.currentKey, done: report.done, columns: report.columns },
      'master key rotation ended',
    );
  return { ...report, keys: inDataDir ? 'data-dir' : 'environment', began, previousRemoved };
}

const command = <I, R>(c: StoreCommand<I, R>) => c;

export const keyCommands = {
  'keys rotate': command({
    parse: parseRotateInput,
    run: (deps, input: KeysRotateInput) => rotateKeys(deps, input),
  }),
};
