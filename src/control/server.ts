import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type DataDirLock, lockDataDir } from '../db/data-dir-lock.js';
import {
  isInputError,
  isStoreCommand,
  type StoreCommand,
  type StoreDeps,
  storeCommands,
} from './commands.js';
import { type ControlAnswer, controlSocketPath } from './protocol.js';

// Requests are a command name and a few options; anything larger is not from the Kopek CLI.
const MAX_REQUEST_BYTES = 64 * 1024;

/** What `kopek serve` holds on the embedded store: the DATA_DIR lock and the control socket. */
export interface HeldDataDir {
  lock: DataDirLock;
  /** Starts answering commands; those that arrive earlier wait for this. */
  ready(deps: StoreDeps): void;
  close(): Promise<void>;
}

/**
 * Takes DATA_DIR and opens the control socket at once, before the store, so that a CLI finding the
 * lock always finds the socket too: its commands then wait until the server has opened the store.
 */
export async function holdDataDir(dataDir: string, log: FastifyBaseLogger): Promise<HeldDataDir> {
  const socket = controlSocketPath(dataDir);
  const lock = await lockDataDir(dataDir, { command: 'kopek serve', ...(socket ? { socket } : {}) });
  let ready!: (deps: StoreDeps) => void;
  const deps = new Promise<StoreDeps>((resolve) => {
    ready = resolve;
  });
  let server: Server | undefined;
  if (socket === undefined) {
    log.warn(
      { dataDir },
      'DATA_DIR is too long a path for a control socket: CLI commands cannot run alongside',
    );
  } else {
    try {
      server = await listenControl(socket, deps, log);
    } catch (err) {
      log.warn({ err, socket }, 'could not open the control socket: CLI commands cannot run alongside');
    }
  }
  return {
    lock,
    ready,
    close: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}

async function listenControl(
  path: string,
  deps: Promise<StoreDeps>,
  log: FastifyBaseLogger,
): Promise<Server> {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!lstatSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
  chmodSync(dir, 0o700);
  // Left by a server that did not close; it cannot be in use, since this process holds the lock.
  rmSync(path, { force: true });
  // Half-open: the client ends its side to mark the end of the request, and still reads the answer.
  const server = createServer({ allowHalfOpen: true }, (conn) => serveConnection(conn, deps, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return server;
}

function serveConnection(conn: Socket, deps: Promise<StoreDeps>, log: FastifyBaseLogger): void {
  let text = '';
  conn.setEncoding('utf8');
  conn.setTimeout(30_000, () => conn.destroy());
  conn.on('error', () => {});
  conn.on('data', (chunk: string) => {
    text += chunk;
    if (text.length > MAX_REQUEST_BYTES) conn.destroy();
  });
  conn.on('end', () => {
    // A connection that sends nothing only checks that the server is there.
    if (text === '') {
      conn.end();
      return;
    }
    conn.setTimeout(0);
    void answer(text, deps, log).then((a) => conn.end(`${JSON.stringify(a)}\n`));
  });
}

async function answer(
  text: string,
  deps: Promise<StoreDeps>,
  log: FastifyBaseLogger,
): Promise<ControlAnswer> {
  let name: unknown;
  let input: unknown;
  try {
    ({ command: name, input } = JSON.parse(text) as { command?: unknown; input?: unknown });
  } catch {
    return { ok: false, error: { kind: 'input', message: 'the request is not JSON' } };
  }
  if (typeof name !== 'string' || !isStoreCommand(name))
    return { ok: false, error: { kind: 'unknown', message: `unknown command: ${String(name)}` } };
  // Narrowed to one command by its name; the table's types cannot say which.
  const command = storeCommands[name] as unknown as StoreCommand<unknown, unknown>;
  try {
    const result = await command.run(await deps, command.parse(input));
    log.info({ command: name }, 'ran a CLI command');
    return { ok: true, result };
  } catch (err) {
    if (isInputError(err)) return { ok: false, error: { kind: 'input', message: err.message } };
    log.error({ err, command: name }, 'a CLI command failed');
    return {
      ok: false,
      error: { kind: 'failed', message: err instanceof Error ? err.message : String(err) },
    };
  }
}
