import { type CliDeps, runCli } from '../../src/cli/run.js';
import type { Harness } from '../harness.js';
import { pooledSigningKeys } from '../signing-keys.js';

/** What one `kopek …` printed, run in this process. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they came. */
  output: string;
}

/**
 * Runs `kopek <args>` in this process: on `deps`' store when given, else on what `env` names (an
 * embedded store in DATA_DIR, say).
 */
export async function runKopek(
  deps: CliDeps | undefined,
  env: Record<string, string | undefined>,
  ...args: string[]
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  let output = '';
  const io = {
    env,
    out: (text: string) => {
      stdout += `${text}\n`;
      output += `${text}\n`;
    },
    err: (text: string) => {
      stderr += `${text}\n`;
      output += `${text}\n`;
    },
  };
  const code = await runCli(args, io, deps);
  return { code, stdout, stderr, output };
}

/**
 * The CLI on the worker's shared store and app, as a server holding the store runs its commands: a
 * changed shop is forgotten by the app, whose next request sees the change.
 */
export function harnessCli(h: Harness) {
  const deps: CliDeps = {
    db: h.db,
    clock: h.clock,
    masterKey: h.masterKey,
    config: h.config,
    log: h.app.log,
    forgetShop: (shop) => h.app.shopAuthenticator.forget(shop),
    // The run's pooled pairs, as the harness's app makes them (an RSA pair costs 50-500 ms to make):
    // two in a row always differ, so a rotation still gets a new key.
    signingKeys: pooledSigningKeys,
  };
  return (...args: string[]) => runKopek(deps, {}, ...args);
}
