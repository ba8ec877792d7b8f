import type { Db } from '../db/db.js';
import { type AttemptRecord, type Next, outcomeStatements, outcomesStatements } from './queue.js';

/**
 * Records attempts' outcomes in groups: what finishes while a write is on its way goes in the next
 * one, so one commit (and one fdatasync) serves many deliveries instead of one each. A delivery still
 * waits for its own outcome to be committed before its slot is free, so nothing is held only in
 * memory: a process that dies leaves its unrecorded deliveries leased, and they are sent again once
 * the lease runs out, as before. If a group fails as a whole, each of its outcomes is tried alone,
 * so one bad row costs only itself another delivery.
 */

interface Waiting {
  record: AttemptRecord;
  next: Next;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Outcomes per write at most: one statement's arrays stay small. */
export const MAX_GROUP = 200;
/**
 * Writes on their way at once. Two, so that outcomes finishing during a commit's fdatasync need not
 * wait for it to end before the next write starts (each waits for its own commit all the same).
 */
const WRITES_AT_ONCE = 2;

export class OutcomeWriter {
  /** Writes made, and outcomes recorded by them: their ratio is the mean group. */
  readonly stats = { writes: 0, outcomes: 0 };
  #queue: Waiting[] = [];
  #writing = 0;
  #scheduled = false;

  constructor(private readonly db: Pick<Db, 'batch'>) {}

  /** Resolves once the attempt's row and its event's new state are committed. */
  record(record: AttemptRecord, next: Next): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ record, next, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#writing >= WRITES_AT_ONCE || this.#queue.length === 0) return;
    this.#scheduled = true;
    // After the current I/O callbacks: answers that came in together are written together.
    setImmediate(() => {
      this.#scheduled = false;
      this.#writeNext();
    });
  }

  #writeNext(): void {
    if (this.#writing >= WRITES_AT_ONCE || this.#queue.length === 0) return;
    const group = this.#queue.splice(0, MAX_GROUP);
    this.#writing += 1;
    void this.#write(group).finally(() => {
      this.#writing -= 1;
      this.#schedule();
    });
    this.#schedule();
  }

  async #write(group: Waiting[]): Promise<void> {
    try {
      const only = group.length === 1 ? group[0] : undefined;
      await this.db.batch(only ? outcomeStatements(only.record, only.next) : outcomesStatements(group));
      this.stats.writes += 1;
      this.stats.outcomes += group.length;
      for (const w of group) w.resolve();
      return;
    } catch (err) {
      const only = group.length === 1 ? group[0] : undefined;
      if (only) {
        only.reject(err);
        return;
      }
    }
    await Promise.all(
      group.map(async (w) => {
        try {
          await this.db.batch(outcomeStatements(w.record, w.next));
          this.stats.writes += 1;
          this.stats.outcomes += 1;
          w.resolve();
        } catch (err) {
          w.reject(err);
        }
      }),
    );
  }
}
