import type { Db, Statement, Tx } from '../db/db.js';

/**
 * A prompt start for notifications written by this process. Deliverers look for due notifications
 * every NOTIFY_INTERVAL_MS and whenever a delivery ends; a notification written while they are idle
 * waited for the next look (about 0.4 s at the default second, at 500 new notifications/s). A store
 * seen through `wakingStore` tells its DeliveryWake once a transaction that wrote a due delivery
 * has committed, and the deliverer of this process looks at once. Other instances still find it
 * on their next look: the wake saves waiting, it never decides what is sent.
 */

/**
 * Statements that make a delivery due now: the outbox's (outbox.ts, `deliveriesOf`) and a resend
 * (repository.ts). Their texts are Kopek's own, so these words mark them.
 */
const DUE_NOW = ['INSERT INTO deliveries', "UPDATE deliveries SET status = 'pending'"];

const makesDue = (sql: string): boolean => DUE_NOW.some((mark) => sql.includes(mark));
const anyMakesDue = (statements: readonly Statement[]): boolean => statements.some((s) => makesDue(s.sql));

export class DeliveryWake {
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` after each commit that made a delivery due; returns the way to stop. */
  on(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** `db`, telling `wake` after each commit (a statement, a batch, a transaction) that made a delivery due. */
export function wakingStore(db: Db, wake: DeliveryWake): Db {
  const watched = (tx: Tx, mark: () => void): Tx => ({
    inTransaction: true,
    query: <R>(sql: string, params?: readonly unknown[]) => {
      if (makesDue(sql)) mark();
      return tx.query<R>(sql, params);
    },
    exec: (sql) => {
      if (makesDue(sql)) mark();
      return tx.exec(sql);
    },
    batch: <R>(statements: readonly Statement[]) => {
      if (anyMakesDue(statements)) mark();
      return tx.batch<R>(statements);
    },
  });
  return {
    kind: db.kind,
    close: () => db.close(),
    async query<R>(sql: string, params?: readonly unknown[]) {
      const rows = await db.query<R>(sql, params);
      if (makesDue(sql)) wake.notify();
      return rows;
    },
    async batch<R>(statements: readonly Statement[]) {
      const results = await db.batch<R>(statements);
      if (anyMakesDue(statements)) wake.notify();
      return results;
    },
    async tx<T>(fn: (tx: Tx) => Promise<T>) {
      let due = false;
      const result = await db.tx((tx) =>
        fn(
          watched(tx, () => {
            due = true;
          }),
        ),
      );
      if (due) wake.notify();
      return result;
    },
  };
}
