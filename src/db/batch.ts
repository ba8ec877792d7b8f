import { prepareValue } from 'pg/lib/utils.js';
import { isoString } from '../clock.js';
import type { Statement } from './db.js';

/**
 * The parts of node-postgres's connection a Submittable drives: the calls its own Query makes for the
 * extended protocol (pg-cursor does likewise).
 */
interface Connection {
  stream: { cork?: () => void; uncork?: () => void };
  parsedStatements: Record<string, string>;
  parse(q: { text: string; name?: string; types: unknown[] }): void;
  bind(c: { portal: string; statement?: string; values: unknown[]; valueMapper: unknown }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(c: { portal: string; rows: number }): void;
  sync(): void;
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format: 'text' | 'binary';
}

/**
 * A parameter as text for PostgreSQL: node-postgres's own conversion, except that an instant is sent
 * as ISO 8601 in UTC (the same instant, without formatting it by hand in local time). Kopek keeps
 * every instant in timestamptz columns.
 */
export function toWire(value: unknown): string | Buffer | null {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? isoString(value) : prepareValue(value);
}

export type TypeParsers = (oid: number, format: 'text' | 'binary') => (value: string) => unknown;

export interface NamedStatement extends Statement {
  /** The prepared statement's name on every connection, when the text has one. */
  name: string | undefined;
}

/**
 * Several statements sent in one write and answered in one round trip: each is parsed (unless this
 * connection has prepared it already), bound and executed, and one Sync ends them all. PostgreSQL
 * runs everything before a Sync in one implicit transaction: it all commits at the Sync, or, at the
 * first error, the rest is skipped and nothing is kept. A node-postgres Submittable
 * (`client.query(batch)`); `done` settles with the rows of each statement.
 */
export class Batch {
  readonly done: Promise<Record<string, unknown>[][]>;
  /** node-postgres reads `text` and `callback` of every Submittable. */
  readonly text = 'batch';
  readonly callback = undefined;
  #resolve!: (rows: Record<string, unknown>[][]) => void;
  #reject!: (err: unknown) => void;
  readonly #statements: NamedStatement[];
  readonly #parsers: TypeParsers;
  readonly #results: Record<string, unknown>[][] = [];
  #fields: { name: string; parse: (value: string) => unknown }[] = [];
  #rows: Record<string, unknown>[] = [];
  #failed: unknown;
  #connection: Connection | undefined;
  /** Names this batch sent a Parse for: not prepared if the batch fails before reaching them. */
  readonly #parsedHere = new Set<string>();

  constructor(statements: NamedStatement[], parsers: TypeParsers) {
    this.#statements = statements;
    this.#parsers = parsers;
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  submit(connection: Connection): Error | null {
    this.#connection = connection;
    connection.stream.cork?.();
    try {
      for (const s of this.#statements) {
        const name = s.name;
        if (name === undefined || connection.parsedStatements[name] === undefined) {
          connection.parse({ text: s.sql, ...(name ? { name } : {}), types: [] });
          if (name) {
            connection.parsedStatements[name] = s.sql;
            this.#parsedHere.add(name);
          }
        }
        connection.bind({
          portal: '',
          ...(name ? { statement: name } : {}),
          values: [...(s.params ?? [])],
          valueMapper: toWire,
        });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: FieldDescription[] }): void {
    this.#fields = msg.fields.map((f) => ({ name: f.name, parse: this.#parsers(f.dataTypeID, f.format) }));
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.#failed) return;
    try {
      const row: Record<string, unknown> = {};
      msg.fields.forEach((value, i) => {
        const field = this.#fields[i];
        if (field) row[field.name] = value === null ? null : field.parse(value);
      });
      this.#rows.push(row);
    } catch (err) {
      this.#failed = err;
    }
  }

  handleCommandComplete(): void {
    this.#results.push(this.#rows);
    this.#rows = [];
    this.#fields = [];
  }

  handleEmptyQuery(): void {
    this.handleCommandComplete();
  }

  handleError(err: unknown): void {
    // Statements after the failing one were skipped, Parse messages included: what this batch meant
    // to prepare there is not prepared. (The failing one's own Parse went through unless its text is
    // broken, which no retry mends.)
    const connection = this.#connection;
    if (connection) {
      for (const s of this.#statements.slice(this.#results.length + 1)) {
        if (s.name && this.#parsedHere.has(s.name)) delete connection.parsedStatements[s.name];
      }
    }
    this.#reject(err);
  }

  handleReadyForQuery(): void {
    if (this.#failed) this.#reject(this.#failed);
    else this.#resolve(this.#results);
  }

  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}
