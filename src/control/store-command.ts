import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Services } from '../context.js';
import type { MasterKeys } from '../crypto/keyring.js';
import type { Db } from '../db/db.js';

/** What a store command works with, in the CLI's own process or in the server that holds DATA_DIR. */
export interface StoreDeps {
  db: Db;
  clock: Clock;
  masterKey: MasterKeys;
  /** The API's public address, for the examples the CLI prints. */
  publicUrl: string;
  config: Config;
  log: FastifyBaseLogger;
  /** Set in a server: a command that changed a shop's row makes the server's requests see it at once. */
  forgetShop?: (shopId: number) => void;
  /** Told how a long command gets on (in the CLI's own process; a server logs it). */
  progress?: (text: string) => void;
  /** Makes the RSA pairs of shops' notification signing keys; without it, a fresh pair each time. */
  signingKeys?: Services['signingKeys'];
}

/**
 * A CLI command that needs the store. Its input and result are plain JSON, because the same command
 * runs either here or, when a server holds the embedded store, in that server over the control socket.
 */
export interface StoreCommand<I, R> {
  /** Checks an input that arrived over the socket; throws an input error. */
  parse(raw: unknown): I;
  run(deps: StoreDeps, input: I): Promise<R>;
}
