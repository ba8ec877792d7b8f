import type { Db, Statement, Tx } from './db.js';

/**
 * A transaction held open across the steps of one piece of work (a request, say) and ended by its
 * owner: everything written through `db` commits or rolls back together.
 */
export interface HeldTx {
  /** The store as seen inside the transaction: its own `tx` and `batch` are savepoints within it. */
  readonly db: Db;
  readonly tx: Tx;
  /**
   * Commits, after `last` has run inside the transaction, or rolls back. Resolves when the transaction
   * is over; rejects when it could not commit (then nothing of it took effect). Only the first call
   * counts.
   */
  end(commit: boolean, last?: (tx: Tx) => Promise<void>): Promise<void>;
}

const ROLLBACK = Symbol('rollback');

interface Decision {
  commit: boolean;
  last?: ((tx: Tx) => Promise<void>) | undefined;
}

/** Opens a transaction and resolves once it is open, holding it until `end` is called. */
export function holdTransaction(db: Db): Promise<HeldTx> {
  return new Promise((resolve, reject) => {
    let decide!: (d: Decision) => void;
    const decided = new Promise<Decision>((r) => {
      decide = r;
    });
    let opened = false;
    const over = db.tx(async (tx) => {
      opened = true;
      resolve({ db: dbWithin(tx, db.kind), tx, end });
      const d = await decided;
      if (!d.commit) throw ROLLBACK;
      if (d.last) await d.last(tx);
    });
    const done = over.then(
      () => undefined,
      (err: unknown) => {
        if (err === ROLLBACK) return;
        if (!opened) reject(err);
        throw err;
      },
    );
    // Nobody may be awaiting `done` yet (the transaction failed to open, or its owner has not ended it).
    done.catch(() => {});
    function end(commit: boolean, last?: (tx: Tx) => Promise<void>): Promise<void> {
      decide({ commit, last });
      return done;
    }
  });
}

/**
 * A `Db` that works inside an open transaction: `tx` and `batch` become savepoints, so the code that
 * runs in it keeps its own all-or-nothing units (and the failure of one leaves the rest usable), while
 * nothing commits before the outer transaction does. It is marked `insideTransaction`, so code that
 * must not call out of the process while a transaction is open can tell (see gateway/client.ts).
 */
export function dbWithin(tx: Tx, kind: Db['kind']): Db {
  let savepoints = 0;
  const savepoint = async <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => {
    const name = `kopek_sp_${++savepoints}`;
    await tx.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn(tx);
      await tx.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await tx.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
      throw err;
    }
  };
  return {
    kind,
    insideTransaction: true,
    query: (sql, params) => tx.query(sql, params),
    tx: savepoint,
    batch: <R>(statements: readonly Statement[]) => savepoint((t) => t.batch<R>(statements)),
    async lockKey() {
      // A key lock spans work of several transactions; inside one it would outlive nothing.
      throw new Error('a key lock is taken on the store itself, not inside a transaction');
    },
    async close() {
      throw new Error('a store seen inside a transaction is closed by ending the transaction');
    },
  };
}
