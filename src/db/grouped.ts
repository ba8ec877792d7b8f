import type { Db, Statement } from './db.js';
import { mergeRows } from './rows.js';

/**
 * Group commit for independent writes. Each unit is a batch of INSERTs of new rows that commit
 * together or not at all (a subscription's create: its card, payment, plan, customer, subscription,
 * charge record and events). While a store is busy, units that arrive wait for one of GROUP_SLOTS
 * transactions to end and then commit together in the next one, their rows merged into one statement
 * per table (mergeRows). A unit is never split: every row of it commits in the same transaction, and
 * the caller hears back only once that transaction has committed. PostgreSQL's work per statement,
 * per round trip and per commit is shared by the group; at low load a unit finds a slot free and
 * commits alone, at once.
 *
 * A group that PostgreSQL refused as a whole (an error it reported, so nothing of it committed) is
 * run again one unit to a transaction, so each unit gets its own outcome and a bad one takes no other
 * down. A group whose outcome is unknown (the connection failed during it, maybe during its commit)
 * is read back: each unit's witness (a query that finds one of its new rows) tells whether it
 * committed; one that did is answered as committed, one that did not is run again on its own. So a
 * failed connection never turns the units of a group that committed into errors that their clients
 * would retry into duplicates. A unit without a witness fails, as a lone batch would.
 */

/** Group transactions a store runs at once; further units wait and join the next group. */
export const GROUP_SLOTS = 3;
/** The most units in one group. */
export const GROUP_UNITS = 32;

interface Waiting {
  unit: readonly Statement[];
  witness: Statement | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

class Group {
  readonly #queue: Waiting[] = [];
  #running = 0;
  constructor(private readonly db: Db) {}

  write(unit: readonly Statement[], witness: Statement | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ unit, witness, resolve, reject });
      this.#next();
    });
  }

  #next(): void {
    if (this.#running >= GROUP_SLOTS || this.#queue.length === 0) return;
    const group = this.#queue.splice(0, GROUP_UNITS);
    this.#running++;
    void this.#commit(group).finally(() => {
      this.#running--;
      this.#next();
    });
  }

  async #commit(group: Waiting[]): Promise<void> {
    try {
      await this.db.batch(mergeRows(group.map((w) => w.unit)));
    } catch (err) {
      if (!refusedWhole(err)) {
        // The outcome is unknown: what committed is read back, unit by unit.
        await Promise.all(group.map((w) => this.#readBack(w, err)));
        return;
      }
      if (group.length === 1) {
        group[0]?.reject(err);
        return;
      }
      // Nothing of the group committed: each unit on its own, for its own outcome.
      await Promise.all(
        group.map((w) =>
          this.db.batch(w.unit).then(
            () => w.resolve(),
            (e: unknown) => w.reject(e),
          ),
        ),
      );
      return;
    }
    for (const w of group) w.resolve();
  }

  /**
   * A unit of a group whose outcome is unknown: committed when its witness finds it; else run on its
   * own (a unit is new rows, so a unit whose group did commit meanwhile is refused for its keys, and
   * its witness, asked again, finds it). Without a witness, or with the store unreachable, it fails.
   */
  async #readBack(w: Waiting, err: unknown): Promise<void> {
    const { witness } = w;
    if (!witness) {
      w.reject(err);
      return;
    }
    const committed = async () => (await this.db.query(witness.sql, witness.params)).length > 0;
    try {
      if (await committed()) {
        w.resolve();
        return;
      }
      await this.db.batch(w.unit);
      w.resolve();
    } catch (again) {
      try {
        if (await committed()) {
          w.resolve();
          return;
        }
      } catch {
        // The store cannot say: the unit's outcome stays unknown.
      }
      w.reject(again);
    }
  }
}

/** An error PostgreSQL reported for the transaction (severity ERROR): it rolled back, all of it. */
function refusedWhole(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { severity?: unknown }).severity === 'ERROR';
}

const groups = new WeakMap<Db, Group>();

/**
 * Commits `unit` (INSERTs of new rows, see above) with the units other requests write at the same
 * moment; resolves once it has committed. `witness`: a query that returns a row once the unit has
 * committed (one of its new rows by its key), read when the group's outcome is unknown. Inside a
 * transaction (`insideTransaction`) it is a batch of that transaction, as it must be. On the embedded store it is a batch of its own: one connection,
 * commits that flush nothing and statements planned at every run leave a group nothing to share
 * (the embedded create benchmark: 3.95–4.18 ms of CPU per subscription with groups or without).
 */
export function writeGrouped(db: Db, unit: readonly Statement[], witness?: Statement): Promise<void> {
  if (db.insideTransaction || db.kind === 'pglite') return db.batch(unit).then(() => {});
  let group = groups.get(db);
  if (!group) {
    group = new Group(db);
    groups.set(db, group);
  }
  return group.write(unit, witness);
}
