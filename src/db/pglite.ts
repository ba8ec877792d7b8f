import { mkdirSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { PRIVATE_DIR_MODE } from './data-dir-mode.js';
import { type Db, KeyLocks, type Statement, statementOf, type Tx } from './db.js';
import { PrivateNodeFS } from './private-fs.js';

export interface PgliteOptions {
  /**
   * A data directory as `dumpDataDir()` wrote it, to start from instead of an empty cluster: an
   * in-memory store opened from it skips the cluster's creation, which costs seconds.
   */
  loadDataDir?: Blob;
}

export interface PgliteDb extends Db {
  /** The whole data directory as an uncompressed tarball, for `loadDataDir`. */
  dumpDataDir(): Promise<Blob>;
}

/**
 * PostgreSQL's buffer cache inside PGlite. PGlite keeps PostgreSQL's default of 128 MB, and its
 * WebAssembly memory holds all of it from the start: the embedded server sat at 420 MB idle. The
 * data files are read through the operating system, whose page cache keeps them too, so a smaller
 * cache costs copies, not disk reads; durability does not depend on it (docs/performance.md, Memory).
 */
export const PGLITE_SHARED_BUFFERS = '32MB';

const BYTEA = 17;

/**
 * bytea both ways through Buffer's native hex codec. PGlite's own converts byte by byte in
 * JavaScript (a string per byte out, a parseInt per byte back): a 9 MiB payment-proof document
 * cost seconds of CPU each way. The text is the same: `\x` and two hex digits a byte.
 */
const byteaCodecs = {
  serializers: {
    [BYTEA]: (value: unknown): string => {
      if (!(value instanceof Uint8Array)) throw new Error('Invalid input for bytea type');
      return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
    },
  },
  parsers: {
    [BYTEA]: (text: string): Buffer => Buffer.from(text.slice(2), 'hex'),
  },
};

/**
 * PGlite runs each statement on this process's thread, and drains its queue of statements without
 * letting the event loop turn: a queue of a second's work held every request (a liveness check
 * included) for that second. So the store keeps the queue itself, in order, and before it hands
 * PGlite the next statement (or transaction), once this long has passed since the loop last turned,
 * lets the loop turn once: what came in meanwhile (GET /health) is answered between statements.
 */
const TURN_EVERY_MS = 5;

/** Runs store work one piece at a time, in the order it came, letting the event loop turn between. */
function turnTaking(): <T>(work: () => Promise<T>) => Promise<T> {
  let turned = performance.now();
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>) => {
    const result = tail.then(async () => {
      if (performance.now() - turned >= TURN_EVERY_MS) {
        await turn();
        turned = performance.now();
      }
      return work();
    });
    tail = result.catch(() => undefined);
    return result;
  };
}

/**
 * The embedded store: PGlite in a directory (or in memory when dir is undefined), its files readable
 * by this user only. One connection; PGlite queues queries, and a transaction holds the connection
 * until it ends.
 */
export async function createPgliteDb(
  dir: string | undefined,
  options: PgliteOptions = {},
): Promise<PgliteDb> {
  if (dir !== undefined) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const lite = await PGlite.create({
    ...(dir !== undefined ? { fs: new PrivateNodeFS(dir) } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    parsers: { 20: (v: string) => Number(v), 1700: (v: string) => Number(v), ...byteaCodecs.parsers },
    serializers: byteaCodecs.serializers,
    // PGlite's own parameters kept, one added: a command-line setting wins over postgresql.conf,
    // so a data directory made before this setting gets it too.
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  });
  const inTurn = turnTaking();
  const query = (s: Statement) =>
    inTurn(async () => (await lite.query(s.sql, s.params as unknown[] | undefined)).rows);
  // In memory, and exact: the data directory's lock (data-dir-lock.ts) lets one process open it, so
  // every holder of a key is in this set. A process that dies takes the set with it.
  const keyLocks = new KeyLocks();
  return {
    kind: 'pglite',
    async query(q, params) {
      return (await query(statementOf(q, params))) as never[];
    },
    tx(fn) {
      return inTurn(() =>
        lite.transaction(async (t) => {
          const tx: Tx = {
            inTransaction: true,
            async query(q, params) {
              const s = statementOf(q, params);
              const res = await t.query(s.sql, s.params as unknown[] | undefined);
              return res.rows as never[];
            },
            async exec(sql) {
              await t.exec(sql);
            },
            async batch(statements) {
              const results = [];
              for (const s of statements)
                results.push((await t.query(s.sql, s.params as unknown[] | undefined)).rows as never[]);
              return results;
            },
          };
          return fn(tx);
        }),
      );
    },
    async batch(statements) {
      // A lone statement is a transaction of its own.
      if (statements.length === 1) return [(await query(statements[0] as Statement)) as never[]];
      return inTurn(() =>
        lite.transaction(async (t) => {
          const results = [];
          for (const s of statements)
            results.push((await t.query(s.sql, s.params as unknown[] | undefined)).rows as never[]);
          return results;
        }),
      );
    },
    async lockKey(space, key) {
      return keyLocks.lock(`${space}:${key}`);
    },
    dumpDataDir() {
      return lite.dumpDataDir('none');
    },
    async close() {
      if (!lite.closed) await lite.close();
    },
  };
}
