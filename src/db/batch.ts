import type pg from 'pg';
import { isoString } from '../clock.js';
import type { Statement } from './db.js';

/**
 * A parameter as Kopek sends it: an instant as ISO 8601 in UTC (the same instant node-postgres would
 * send in local time, without formatting it by hand); anything else as node-postgres converts it.
 * Kopek keeps every instant in timestamptz columns.
 */
export function toWire(value: unknown): unknown {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? isoString(value) : value;
}

type Rows = Record<string, unknown>[];

export interface PipelineOptions {
  /**
   * Wraps the statements in BEGIN … COMMIT, sent along with them: they all take effect or none.
   * Off inside a transaction (it is already one) and for a lone statement (atomic on its own).
   */
  transaction: boolean;
  /** The prepared statement's name for a statement, undefined to run it unnamed. */
  nameOf(s: Statement): string | undefined;
  /** Told of every error: that of a statement (with it) and that of BEGIN or COMMIT (without). */
  onError?(err: Error, s: Statement | undefined): void;
}

/** A statement's parameters as they are sent (see toWire). */
export const valuesOf = (s: Statement): unknown[] | undefined => s.params?.map(toWire);

/**
 * A statement without parameters sent as the others are, by the extended protocol (node-postgres's
 * `queryMode`), so that it is corked with them (postgres.ts: CoalescingSocket) and the whole batch
 * leaves in one write.
 */
const extended = (text: string): pg.QueryConfig => ({ text, queryMode: 'extended' }) as pg.QueryConfig;

/**
 * Runs the statements on `client`, a connection in node-postgres's pipeline mode: every statement is
 * written without waiting for the answer to the one before, each as its own extended-protocol query,
 * and the answers come back in order, so the whole batch costs one round trip. Resolves with each statement's rows; rejects with the first
 * error in statement order.
 *
 * With `transaction`, BEGIN goes first and COMMIT last. After a failed statement PostgreSQL refuses
 * the rest ("current transaction is aborted") and its COMMIT is a ROLLBACK, so nothing is kept. A
 * value that node-postgres cannot convert fails its statement before it is sent, which PostgreSQL
 * never learns of: node-postgres reports that failure while the statement is written, so ROLLBACK
 * is written instead of COMMIT.
 */
export function pipelined(client: pg.ClientBase, statements: readonly Statement[], o: PipelineOptions) {
  if (statements.length === 0) return Promise.resolve([]);
  return new Promise<Rows[]>((resolve, reject) => {
    const results: Rows[] = new Array(statements.length);
    const errors: (Error | undefined)[] = [];
    const settled: boolean[] = [];
    let pending = statements.length + (o.transaction ? 2 : 0);
    let failed = false;
    const finish = () => {
      const err = errors.find((e) => e !== undefined);
      if (err) reject(err);
      else resolve(results);
    };
    // `slot` numbers the queries as written: BEGIN (with `transaction`), the statements, COMMIT.
    const answer =
      (slot: number, s: Statement | undefined, take?: (r: pg.QueryResult) => Error | undefined) =>
      (err: Error | null, result: pg.QueryResult) => {
        // node-postgres may answer a query it failed before sending a second time, when its Sync returns.
        if (settled[slot]) return;
        settled[slot] = true;
        const error = err ?? take?.(result);
        if (error) {
          failed = true;
          errors[slot] = error;
          o.onError?.(error, s);
        }
        if (--pending === 0) finish();
      };
    const first = o.transaction ? 1 : 0;
    if (o.transaction) client.query(extended('BEGIN'), answer(0, undefined));
    statements.forEach((s, i) => {
      const done = answer(first + i, s, (r) => {
        results[i] = r.rows;
        return undefined;
      });
      const name = o.nameOf(s);
      if (name) client.query({ name, text: s.sql, values: valuesOf(s) }, done);
      else client.query(s.sql, valuesOf(s) ?? [], done);
    });
    if (o.transaction) {
      const last = first + statements.length;
      client.query(
        extended(failed ? 'ROLLBACK' : 'COMMIT'),
        // A COMMIT that ends an aborted transaction answers ROLLBACK: a statement failed, and says why.
        answer(last, undefined, (r) =>
          r.command === 'COMMIT' ? undefined : new Error(`the batch was rolled back (${r.command})`),
        ),
      );
    }
  });
}
