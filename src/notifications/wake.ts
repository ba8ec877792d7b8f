import type { Db, Statement, Tx } from '../db/db.js';

/**
 * A prompt start for notifications written by this process. Deliverers look for due notifications
 * every NOTIFY_INTERVAL_MS and whenever a delivery ends; a notification written while they are idle
 * waited for the next look (about 0.4 s at the default second, at 500 new notifications/s). A store
 * seen through `wakingStore` tells its DeliveryWake once a transaction that wrote a due delivery
 * has committed, and the deliverer of this process looks at once. Other instances still find it
 * on their next look: the wake saves waiting, it never decides what is sent.
 *
 * The writers that make a delivery due say so: their statements carry `wakes` (the outbox's, with a
 * URL to deliver to, and a resend's). Statements run as bare text never wake.
 */

const wakes = (q: string | Statement): boolean => typeof q !== 'string' && q.wakes === true;
const anyWakes = (statements: readonly Statement[]): boolean => statements.some((s) => s.wakes === true);

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
    query: <R>(q: string | Statement, params?: readonly unknown[]) => {
      if (wakes(q)) mark();
      return tx.query<R>(q, params);
    },
    exec: (sql) => tx.exec(sql),
    batch: <R>(statements: readonly Statement[]) => {
      if (anyWakes(statements)) mark();
      return tx.batch<R>(statements);
    },
  });
  return {
    kind: db.kind,
    ...(db.insideTransaction ? { insideTransaction: true as const } : {}),
    close: () => db.close(),
    lockKey: (space, key) => db.lockKey(space, key),
    async query<R>(q: string | Statement, params?: readonly unknown[]) {
      const rows = await db.query<R>(q, params);
      if (wakes(q)) wake.notify();
      return rows;
    },
    async batch<R>(statements: readonly Statement[]) {
      const results = await db.batch<R>(statements);
      if (anyWakes(statements)) wake.notify();
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
