/** Something SQL can be sent to: the store itself or an open transaction. */
export interface Queryable {
  /** Runs SQL text with its parameters, or a statement built beforehand (`params` then unused). */
  query<R = Record<string, unknown>>(sql: string | Statement, params?: readonly unknown[]): Promise<R[]>;
}

/** An open transaction. Functions that take locks ask for a Tx so the type says "call me inside one". */
export interface Tx extends Queryable {
  readonly inTransaction: true;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs the statements in order inside this transaction, in one round trip to PostgreSQL; the first
   * error fails the transaction. Resolves with each statement's rows.
   */
  batch<R = Record<string, unknown>>(statements: readonly Statement[]): Promise<R[][]>;
}

/** One SQL statement with its parameters, built now and run later (in a batch, say). */
export interface Statement {
  sql: string;
  params?: readonly unknown[];
  /**
   * Set by the writers that make a notification's delivery due now (the outbox, a resend): a store
   * seen through a DeliveryWake tells it once the statement has committed.
   */
  wakes?: boolean;
  /**
   * Set on an INSERT of rows whose values are all parameters, which may be written as one statement
   * with the rows of other statements of the same shape (db/rows.ts, mergeRows): independent pieces
   * of work then share a statement. Built by `shaped`, so `sql` is the shape's text for its rows.
   */
  rows?: RowsShape;
}

/**
 * The shape of an INSERT whose rows are all parameters, `arity` to a row: its text for any number of
 * rows. Written once, next to its table's repository; nothing reads SQL text to merge statements.
 */
export interface RowsShape {
  /** Names the shape: statements merge only with statements of the same key. */
  readonly key: string;
  /** Parameters per row. */
  readonly arity: number;
  /** The tuple of the row at `index` (from 0, across the statement), its parameters from `$first`. */
  tuple(first: number, index: number): string;
  /** The whole statement around its rows' tuples (joined by commas). */
  around(tuples: string): string;
}

/** The statement `query` was given: built beforehand, or as text and parameters. */
export function statementOf(sql: string | Statement, params?: readonly unknown[]): Statement {
  return typeof sql === 'string' ? { sql, params } : sql;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs the statements in order as one transaction, in one round trip to PostgreSQL: all of them
   * take effect or, at the first error, none. Later statements cannot use earlier results except
   * through SQL, so a batch is for writes whose values are known beforehand. Resolves with each
   * statement's rows.
   */
  batch<R = Record<string, unknown>>(statements: readonly Statement[]): Promise<R[][]>;
  /**
   * Takes the lock named `key` in `space` for as long as a piece of work runs across several
   * transactions (a keyed request in the phased mode), without holding a transaction open: resolves
   * with the function that releases it, or undefined when someone holds it already (this process or,
   * on PostgreSQL, another one). A process that dies loses its locks with its connection, so a lock
   * never outlives its holder. See KeyLocks.
   */
  lockKey(space: number, key: string): Promise<KeyLockRelease | undefined>;
  /**
   * Set on a store seen inside an open transaction (`dbWithin`): work through it commits only when the
   * transaction does, so nothing that leaves the process (a remote gateway call) may run through it.
   */
  readonly insideTransaction?: true;
  close(): Promise<void>;
}

/** Releases a key lock; only the first call counts, and it never rejects. */
export type KeyLockRelease = () => Promise<void>;

/**
 * Key locks of this process: the names held right now. A lock is taken here first, so two requests
 * of one process never share one even where the store's own lock is per session (one session per
 * process holds them all); each store adds its own cross-process lock on top (see postgres.ts).
 */
export class KeyLocks {
  readonly #held = new Set<string>();

  /** Takes `name`; false when it is held already. */
  take(name: string): boolean {
    if (this.#held.has(name)) return false;
    this.#held.add(name);
    return true;
  }

  drop(name: string): void {
    this.#held.delete(name);
  }

  /** Takes `name` as a lock of this process alone (the embedded store: one process owns its data). */
  lock(name: string): KeyLockRelease | undefined {
    if (!this.take(name)) return undefined;
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      this.drop(name);
    };
  }
}

/** PostgreSQL error codes Kopek reacts to. */
export const PgCode = {
  uniqueViolation: '23505',
  serializationFailure: '40001',
  deadlock: '40P01',
  insufficientPrivilege: '42501',
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err
    ? String((err as { code: unknown }).code)
    : undefined;
}

export function isUniqueViolation(err: unknown): boolean {
  return pgErrorCode(err) === PgCode.uniqueViolation;
}

const texts = new Map<string, string>();

/**
 * The SQL text built by `build` for `key`, built once: statements assembled from fixed parts (column
 * lists, parameter numbers) are the same few texts every time, and a text that is the same string
 * object also hashes once when it is looked up as a prepared statement.
 */
export function sqlText(key: string, build: () => string): string {
  let text = texts.get(key);
  if (text === undefined) {
    text = build();
    texts.set(key, text);
  }
  return text;
}
