import { join } from 'node:path';

/**
 * The control socket's protocol: one connection per command; the client sends one JSON request and
 * ends its side, the server sends one JSON answer and closes.
 */
export interface ControlRequest {
  command: string;
  input?: unknown;
}

export type ControlAnswer =
  | { ok: true; result: unknown }
  | { ok: false; error: { kind: 'input' | 'unknown' | 'failed'; message: string } };

/** A command the server refused or could not run. */
export class ControlError extends Error {
  constructor(
    readonly kind: 'input' | 'unknown' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

// The socket sits in a directory only the owner may enter: connecting needs search permission on it,
// on every system, from the moment the socket exists.
const CONTROL_DIR = 'control';
// sun_path holds 104 bytes on macOS and the BSDs, 108 on Linux, with the terminating NUL.
const MAX_SOCKET_PATH = 103;

/** The control socket of the server holding DATA_DIR, or undefined when its path would be too long. */
export function controlSocketPath(dataDir: string): string | undefined {
  const path = join(dataDir, CONTROL_DIR, 'kopek.sock');
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : undefined;
}
