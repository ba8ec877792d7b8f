import type { Db, Statement } from '../db/db.js';
import { Keyring, MasterKeyError } from './keyring.js';
import { columnName, SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';

/**
 * Re-seals every sealed value not yet under the current master key, while the service runs. Each batch
 * is its own short transaction: its rows are locked (FOR UPDATE SKIP LOCKED, so a row a request holds
 * is left for a later pass) and each is replaced only if it still holds the text read (a writer that
 * got there first keeps its value). A row is only ever replaced by a value that opens under the
 * current key, which every instance accepts, so a rotation killed at any point loses nothing; run
 * again, it finds what is left by the key id the values carry.
 */

export interface ColumnState {
  /** table.column */
  column: string;
  resealed: number;
  /** Values not under the current key once the rotation ended. */
  left: number;
  /** ... of which these open under none of the keys given. */
  unreadable: number;
  /** Why the first unreadable value does not open. */
  problem?: string;
}

export interface RotationReport {
  currentKey: string;
  previousKeys: string[];
  columns: ColumnState[];
  /** Nothing is left sealed under another key: the previous keys can be removed. */
  done: boolean;
}

export interface RotationOptions {
  batchSize?: number;
  columns?: readonly SealedColumn[];
  /** Lines telling how far it got, now and then. */
  progress?: (text: string) => void;
  /** Told after each batch, before and after its commit (tests stop a rotation there). */
  onBatch?: (batch: number, phase: 'written' | 'committed') => void;
}

export const DEFAULT_BATCH_SIZE = 500;
/** Rows locked by a request during a pass are taken up by another pass, a few at most. */
const MAX_PASSES = 3;
const PROGRESS_EVERY_MS = 2000;

const ident = (name: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL name: ${name}`);
  return name;
};

/** Values of `c` not under the current key. */
const notCurrent = (c: SealedColumn) => `${ident(c.column)} IS NOT NULL AND ${ident(c.column)} NOT LIKE $1`;

export async function countLeft(db: Db, ring: Keyring, c: SealedColumn): Promise<number> {
  const [row] = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${ident(c.table)} WHERE ${notCurrent(c)}`,
    [`${ring.currentPrefix}%`],
  );
  return Number(row?.n ?? 0);
}

/**
 * Throws when the store holds sealed values and the ring opens none of those it samples: the keys
 * given are not this store's (a mistyped KOPEK_MASTER_KEY), and a rotation would re-seal nothing.
 */
export async function checkKeysOpenStore(db: Db, ring: Keyring, columns = SEALED_COLUMNS): Promise<void> {
  let seen = 0;
  // The keys the values seen are sealed under, by id, for the operator to tell which key is needed.
  const needed = new Set<string>();
  for (const c of columns) {
    const extra = (c.with ?? []).map((w) => `, ${ident(w)}`).join('');
    const rows = await db.query<Record<string, unknown>>(
      `SELECT ${ident(c.id)}, ${ident(c.column)}${extra} FROM ${ident(c.table)}
       WHERE ${ident(c.column)} IS NOT NULL ORDER BY ${ident(c.id)} LIMIT 20`,
    );
    for (const row of rows) {
      seen += 1;
      const id = Keyring.keyIdOf(row[c.column] as string);
      if (id !== undefined) needed.add(id);
      try {
        ring.open(c.purpose, row[c.column] as string, c.aad?.(row) ?? '');
        return;
      } catch (err) {
        if (!(err instanceof MasterKeyError)) throw err;
      }
    }
  }
  if (seen > 0) {
    const under = needed.size > 0 ? ` (sealed under master key ${[...needed].join(', ')})` : '';
    throw new MasterKeyError(
      `the master keys given (${[ring.currentId, ...ring.previousIds].join(', ')}) open none of the values sealed in this store${under}: is KOPEK_MASTER_KEY (and KOPEK_MASTER_KEY_PREVIOUS) right? Nothing was changed.`,
    );
  }
}

export async function rotateSealed(
  db: Db,
  ring: Keyring,
  opts: RotationOptions = {},
): Promise<RotationReport> {
  const columns = opts.columns ?? SEALED_COLUMNS;
  const states: ColumnState[] = [];
  for (const c of columns) {
    const left = await countLeft(db, ring, c);
    states.push({ column: columnName(c), resealed: 0, left, unreadable: 0 });
    opts.progress?.(`${columnName(c)}: ${left} to re-seal under key ${ring.currentId}`);
  }
  const batches = { n: 0 };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let more = false;
    for (const [i, c] of columns.entries()) {
      const state = states[i] as ColumnState;
      if (state.left === 0) continue;
      state.unreadable = 0;
      await walk(db, ring, c, state, batches, opts);
      state.left = await countLeft(db, ring, c);
      if (state.left > state.unreadable) more = true;
    }
    if (!more) break;
  }
  return {
    currentKey: ring.currentId,
    previousKeys: ring.previousIds,
    columns: states,
    done: states.every((s) => s.left === 0),
  };
}

async function walk(
  db: Db,
  ring: Keyring,
  c: SealedColumn,
  state: ColumnState,
  batches: { n: number },
  opts: RotationOptions,
): Promise<void> {
  const size = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const [table, id, column] = [ident(c.table), ident(c.id), ident(c.column)];
  const extra = (c.with ?? []).map((w) => `, ${ident(w)}`).join('');
  const select = (after: boolean) =>
    `SELECT ${id}, ${column}${extra} FROM ${table} WHERE ${notCurrent(c)}${after ? ` AND ${id} > $3` : ''}
     ORDER BY ${id} LIMIT $2 FOR UPDATE SKIP LOCKED`;
  const update = `UPDATE ${table} SET ${column} = $1 WHERE ${id} = $2 AND ${column} = $3 RETURNING 1 AS done`;
  let after: unknown;
  let told = performance.now();
  for (;;) {
    const seen = await db.tx(async (tx) => {
      const params = [`${ring.currentPrefix}%`, size, ...(after === undefined ? [] : [after])];
      const rows = await tx.query<Record<string, unknown>>(select(after !== undefined), params);
      const writes: Statement[] = [];
      for (const row of rows) {
        const old = row[c.column] as string;
        const aad = c.aad?.(row) ?? '';
        try {
          const next = ring.seal(c.purpose, ring.open(c.purpose, old, aad), aad);
          writes.push({ sql: update, params: [next, row[c.id], old] });
        } catch (err) {
          if (!(err instanceof MasterKeyError)) throw err;
          state.unreadable += 1;
          state.problem ??= `${err.message} (${c.table} ${c.id} ${String(row[c.id]).slice(0, 12)}…)`;
        }
      }
      const done = writes.length > 0 ? await tx.batch<{ done: number }>(writes) : [];
      batches.n += 1;
      opts.onBatch?.(batches.n, 'written');
      return { rows, resealed: done.filter((r) => r.length > 0).length };
    });
    opts.onBatch?.(batches.n, 'committed');
    state.resealed += seen.resealed;
    if (seen.rows.length < size) break;
    after = seen.rows.at(-1)?.[c.id];
    if (opts.progress && performance.now() - told > PROGRESS_EVERY_MS) {
      told = performance.now();
      opts.progress(`${state.column}: ${state.resealed} re-sealed so far`);
    }
  }
}
