import { Socket } from 'node:net';
import pg from 'pg';
import { pipelined, valuesOf } from './batch.js';
import {
  type Db,
  type KeyLockRelease,
  KeyLocks,
  PgCode,
  pgErrorCode,
  type Statement,
  statementOf,
  type Tx,
} from './db.js';

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Statements with parameters run as named prepared statements: each connection parses and plans a
 * statement once and then only binds values, which on the charge path is most of the store's work.
 * Kopek's statements are fixed texts (a few are assembled from fixed parts), so the names stay few;
 * past this many distinct texts, new ones run unnamed, so no bug can grow every connection without end.
 */
const MAX_PREPARED = 1000;
// PostgreSQL's "cached plan must not change result type": a migration run by another instance changed
// a table under a prepared statement. That text then runs unnamed from here on.
const FEATURE_NOT_SUPPORTED = '0A000';

/**
 * The error when it means the connection itself is gone: the server ended the session (severity
 * FATAL or PANIC, as when a backend is terminated or the server shuts down) or the socket failed (an
 * error without a server severity). The pool must then drop the connection: its socket may not have
 * closed yet, and the next caller would get it. Errors of a statement leave the connection usable.
 */
function connectionLost(err: unknown): Error | undefined {
  if (!(err instanceof Error)) return undefined;
  const severity = (err as { severity?: unknown }).severity;
  if (severity === undefined || severity === 'FATAL' || severity === 'PANIC') return err;
  return undefined;
}

/** How many times a lone statement or a batch runs in all when PostgreSQL picks it to break a deadlock. */
export const TRANSIENT_ATTEMPTS = 3;

/**
 * Runs `work` again when PostgreSQL ended it as a deadlock victim or a serialization failure. Only
 * for work that is one whole transaction of SQL alone (a lone statement, a batch): the failure rolled
 * it all back and nothing outside the store saw it, so running it again is what would have happened
 * had it come a moment later. Work inside `tx` is not retried here: its function may have done
 * things outside the store.
 */
export async function retryTransient<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const code = pgErrorCode(err);
      const transient = code === PgCode.deadlock || code === PgCode.serializationFailure;
      if (!transient || attempt >= TRANSIENT_ATTEMPTS) throw err;
      // Apart, so the two sides of a deadlock do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20 * attempt));
    }
  }
}

export class PreparedNames {
  readonly #names = new Map<string, string | null>();
  readonly #max: number;

  /** `max` 0: nothing is prepared (DATABASE_PREPARE=false). */
  constructor(max = MAX_PREPARED) {
    this.#max = max;
  }

  nameOf(text: string): string | undefined {
    if (this.#max === 0) return undefined;
    let name = this.#names.get(text);
    if (name === undefined) {
      name = this.#names.size < this.#max ? `kopek_${this.#names.size}` : null;
      this.#names.set(text, name);
    }
    return name ?? undefined;
  }

  /** After `err` from a named run of `text`: whether to run it again unnamed (and never name it again). */
  retryUnnamed(text: string, err: unknown): boolean {
    if (pgErrorCode(err) !== FEATURE_NOT_SUPPORTED || !this.#names.get(text)) return false;
    this.#names.set(text, null);
    return true;
  }
}

/**
 * Key locks across processes: session advisory locks (pg_try_advisory_lock) on one connection of
 * their own, outside the pool, that never opens a transaction. A lock lasts from the start of a piece
 * of work to its end across any number of transactions, yet holds none open; and when the process
 * dies its connection closes and PostgreSQL drops its locks, so a retry after a restart is never told
 * "still running" by a dead process. Locks are taken in this process's own set first, because one
 * session may take its advisory locks again (they stack): the set keeps two requests of this process
 * apart, the session lock keeps processes apart.
 *
 * Should that connection be lost while locks are held, PostgreSQL has dropped them: the requests
 * running here stay apart (the set), but another process could take their keys until they end. The
 * next lock opens a new connection.
 *
 * Not through PgBouncer (or another pooler) in transaction mode, the setting DATABASE_PREPARE=false
 * is for: each statement may run on another server session, so a session lock would be taken on a
 * session other clients then share (and may take again: they stack) and released on yet another.
 * There this session goes straight to PostgreSQL, past the pooler: DATABASE_DIRECT_URL (lockUrl).
 */
function sessionKeyLocks(connectionString: string) {
  const local = new KeyLocks();
  let session: Promise<pg.Client> | undefined;
  const connect = (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString });
    const ready = client.connect().then(() => client);
    const forget = () => {
      if (session === ready) session = undefined;
    };
    client.on('error', forget);
    client.on('end', forget);
    ready.catch(forget);
    return ready;
  };
  return {
    async lock(space: number, key: string): Promise<KeyLockRelease | undefined> {
      const name = `${space}:${key}`;
      if (!local.take(name)) return undefined;
      try {
        session ??= connect();
        const current = session;
        const client = await current;
        const { rows } = await client.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked',
          [space, key],
        );
        if (!rows[0]?.locked) {
          local.drop(name);
          return undefined;
        }
        let released = false;
        return async () => {
          if (released) return;
          released = true;
          try {
            // A session since replaced took its locks with it.
            if (session === current)
              await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [space, key]);
          } catch {
            // The connection is gone, and the lock with it.
          } finally {
            local.drop(name);
          }
        };
      } catch (err) {
        local.drop(name);
        throw err;
      }
    },
    async close() {
      const current = session;
      session = undefined;
      const client = await current?.catch(() => undefined);
      await client?.end().catch(() => {});
    },
  };
}

/**
 * A socket that sends the queries written to it in one tick as one write. node-postgres corks the
 * socket around each extended-protocol query (Parse, Bind, Describe, Execute, Sync) and uncorks it
 * after, which is one system call per statement of a pipelined batch, and as many wake-ups of
 * PostgreSQL. Here the uncork waits for the end of the tick, so a batch leaves in one write; the
 * queries and their order are untouched.
 */
export class CoalescingSocket extends Socket {
  #pending = 0;
  readonly #release = () => {
    const n = this.#pending;
    this.#pending = 0;
    for (let i = 0; i < n; i++) super.uncork();
  };

  override uncork(): void {
    if (this.#pending++ === 0) process.nextTick(this.#release);
  }
}

/**
 * PostgreSQL through a pg pool: the production store, selected by DATABASE_URL. Its connections are
 * in node-postgres's pipeline mode, so the statements of a batch go out in one write (pipelined).
 * `prepare` false runs every statement unnamed, for connection poolers that cannot keep a
 * connection's prepared statements (PgBouncer in transaction mode before 1.21, say).
 */
export function createPostgresDb(
  connectionString: string,
  poolSize = 10,
  options: {
    prepare?: boolean;
    /** Where the key locks' session connects (DATABASE_DIRECT_URL); without it, connectionString. */
    lockUrl?: string;
  } = {},
): Db {
  const getTypeParser = ((oid: number, format?: 'text' | 'binary') => {
    // Amounts are bigint in minor units and always within 2^53, so numbers are exact.
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser;
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    types: { getTypeParser },
    pipeline: true,
    stream: () => new CoalescingSocket(),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it. Nor may
  // one in use: its queries fail (and it is dropped, see connectionLost), and the 'error' it emits
  // after them, once the socket has closed, has nobody else to hear it.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const prepared = new PreparedNames(options.prepare === false ? 0 : MAX_PREPARED);
  const keyLocks = sessionKeyLocks(options.lockUrl ?? connectionString);
  const nameOf = (s: Statement) => (s.params && s.params.length > 0 ? prepared.nameOf(s.sql) : undefined);
  const run = async (client: pg.Pool | pg.PoolClient, s: Statement) => {
    const name = nameOf(s);
    const values = valuesOf(s);
    if (!name) return (await client.query(s.sql, values)).rows;
    try {
      return (await client.query({ name, text: s.sql, values })).rows;
    } catch (err) {
      // Inside a transaction the error has ended it: only a lone statement can simply run again.
      if (client !== pool || !prepared.retryUnnamed(s.sql, err)) throw err;
      return (await client.query(s.sql, values)).rows;
    }
  };

  return {
    kind: 'postgres',
    async query(q, params) {
      const s = statementOf(q, params);
      return retryTransient(() => run(pool, s));
    },
    async tx(fn) {
      const client = await pool.connect();
      // The connection's own failure, if one was seen: then it goes, rather than back to the pool.
      let lost: Error | undefined;
      const watch = <T>(work: Promise<T>): Promise<T> =>
        work.catch((err: unknown) => {
          lost ??= connectionLost(err);
          throw err;
        });
      try {
        await watch(client.query('BEGIN'));
        const tx: Tx = {
          inTransaction: true,
          async query(q, params) {
            const s = statementOf(q, params);
            try {
              return await watch(run(client, s));
            } catch (err) {
              // The transaction is over either way; the next one runs the text unnamed.
              prepared.retryUnnamed(s.sql, err);
              throw err;
            }
          },
          async exec(sql) {
            await watch(client.query(sql));
          },
          async batch(statements) {
            // Already inside BEGIN: the statements only share the round trip.
            return (await pipelined(client, statements, {
              transaction: false,
              nameOf,
              onError: (err, s) => {
                lost ??= connectionLost(err);
                if (s) prepared.retryUnnamed(s.sql, err);
              },
            })) as never[][];
          },
        };
        const result = await fn(tx);
        await watch(client.query('COMMIT'));
        return result;
      } catch (err) {
        if (!lost) await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release(lost);
      }
    },
    batch(statements) {
      return retryTransient(async () => {
        const client = await pool.connect();
        let lost: Error | undefined;
        try {
          return (await pipelined(client, statements, {
            // A lone statement is a transaction of its own.
            transaction: statements.length > 1,
            nameOf,
            onError: (err, s) => {
              lost ??= connectionLost(err);
              if (s) prepared.retryUnnamed(s.sql, err);
            },
          })) as never[][];
        } finally {
          client.release(lost);
        }
      });
    },
    lockKey(space, key) {
      return keyLocks.lock(space, key);
    },
    async close() {
      await keyLocks.close();
      await pool.end();
    },
  };
}
