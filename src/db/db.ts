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
  close(): Promise<void>;
}

/** PostgreSQL error codes Kopek reacts to. */
export const PgCode = {
  uniqueViolation: '23505',
  serializationFailure: '40001',
  deadlock: '40P01',
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
