import type { Config } from '../config.js';
import type { StoreCommandName, StoreInput, StoreResult } from '../control/commands.js';
import type { OpenStore } from '../control/run.js';

/** Where the CLI prints: each call is one line (or several joined with newlines), newline added. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** The environment the configuration comes from; process.env when absent. */
  env?: Record<string, string | undefined>;
}

/**
 * What a test gives the CLI to run on instead of what the environment names: an open store, its
 * clock and master keys, and optionally the configuration.
 */
export interface CliDeps extends OpenStore {
  config?: Config;
}

/** Runs a store command where the CLI's configuration says (or on the injected store). */
export type StoreRunner = <N extends StoreCommandName>(
  name: N,
  input: StoreInput<N>,
  progress?: (text: string) => void,
) => Promise<StoreResult<N>>;

/** What a command's CLI side works with: where to print, and how to reach the store. */
export interface CliContext {
  io: CliIo;
  store: StoreRunner;
}
