import { type RowsShape, type Statement, sqlText } from './db.js';

/**
 * Statements of rows, and how the rows of independent pieces of work ("units": a subscription's
 * create, a renewal's payment) are written together: one statement per shape instead of one per row.
 * PostgreSQL's work per statement (opening the table and its indexes, reading its constraints,
 * planning) and per round trip is then shared by every row of the group.
 */

/** The most rows one statement of a shape carries; more go in another statement of the shape. */
export const MAX_ROWS = 128;

/** The statement of `shape` writing `params` (a whole number of rows). */
export function shaped(shape: RowsShape, params: readonly unknown[], wakes?: boolean): Statement {
  const rows = params.length / shape.arity;
  if (!Number.isInteger(rows) || rows < 1)
    throw new Error(`${shape.key}: ${params.length} parameters are not rows of ${shape.arity}`);
  const sql = sqlText(`rows ${shape.key} ${rows}`, () =>
    shape.around(Array.from({ length: rows }, (_, i) => shape.tuple(1 + i * shape.arity, i)).join(', ')),
  );
  return { sql, params, rows: shape, ...(wakes !== undefined ? { wakes } : {}) };
}

/**
 * The statements of `units`, with the shaped statements of all units merged: one statement per shape
 * (of at most MAX_ROWS rows), in the order the shapes first appear, each carrying its rows in the
 * units' order. A unit with a statement without a shape runs as it is, after the merged ones.
 *
 * Merging moves one unit's rows of a later shape before another unit's rows of an earlier one, so it
 * is for INSERTs of new rows that do not read each other, where only a unit's own order can matter (a
 * row before the row that refers to it). That order is kept: a unit whose shapes come in another order
 * than the group's runs on its own, after the others. Rows of a shape the unit wrote earlier join that
 * earlier statement (an outbox's events written in two places of one unit, say): only for shapes whose
 * rows no other row of the unit refers to.
 */
export function mergeRows(units: readonly (readonly Statement[])[]): Statement[] {
  if (units.length === 1) return [...(units[0] as readonly Statement[])];
  let order = new Map<string, number>();
  const together: (readonly Statement[])[] = [];
  const apart: (readonly Statement[])[] = [];
  for (const unit of units) {
    const shapes = unit.map((s) => s.rows);
    if (shapes.some((shape) => shape === undefined)) {
      apart.push(unit);
      continue;
    }
    const next = new Map(order);
    const seen = new Set<string>();
    let last = -1;
    let fits = true;
    for (const shape of shapes as RowsShape[]) {
      if (seen.has(shape.key)) continue;
      seen.add(shape.key);
      let at = next.get(shape.key);
      if (at === undefined) {
        at = next.size;
        next.set(shape.key, at);
      }
      if (at < last) {
        fits = false;
        break;
      }
      last = at;
    }
    if (!fits) {
      apart.push(unit);
      continue;
    }
    order = next;
    together.push(unit);
  }
  type Part = { shape: RowsShape; params: unknown[]; wakes: boolean };
  const byShape = new Map<string, Part[]>();
  for (const unit of together) {
    for (const s of unit) {
      const shape = s.rows as RowsShape;
      const params = s.params ?? [];
      let parts = byShape.get(shape.key);
      if (!parts) {
        parts = [];
        byShape.set(shape.key, parts);
      }
      let part = parts[parts.length - 1];
      if (!part || (part.params.length + params.length) / shape.arity > MAX_ROWS) {
        part = { shape, params: [], wakes: false };
        parts.push(part);
      }
      for (const p of params) part.params.push(p);
      part.wakes ||= s.wakes === true;
    }
  }
  const merged: Statement[] = [];
  for (const key of order.keys())
    for (const part of byShape.get(key) ?? [])
      merged.push(...powersOfTwo(part.shape, part.params, part.wakes));
  for (const unit of apart) merged.push(...unit);
  return merged;
}

/**
 * `params` (whole rows of `shape`) as statements of 2^k rows each, largest first (13 rows: 8, 4, 1),
 * in order. A merged statement's text depends on its number of rows: so a shape has at most eight
 * texts (1 to MAX_ROWS rows), each prepared once per connection, whatever sizes groups come in. Only
 * the statements carrying the last rows keep `wakes`, once.
 */
function powersOfTwo(shape: RowsShape, params: readonly unknown[], wakes: boolean): Statement[] {
  const out: Statement[] = [];
  let rows = params.length / shape.arity;
  let at = 0;
  while (rows > 0) {
    const n = 2 ** Math.floor(Math.log2(rows));
    const next = at + n * shape.arity;
    rows -= n;
    out.push(shaped(shape, params.slice(at, next), rows === 0 ? wakes : false));
    at = next;
  }
  return out;
}

/**
 * The shape of `INSERT INTO table (columns) VALUES (…)` with one parameter per column, `arity` of them:
 * `into` is the statement up to VALUES.
 */
export function valuesShape(key: string, into: string, arity: number): RowsShape {
  return {
    key,
    arity,
    tuple: (first) => `(${Array.from({ length: arity }, (_, i) => `$${first + i}`).join(', ')})`,
    around: (tuples) => `${into} VALUES ${tuples}`,
  };
}

/**
 * The shape of an INSERT into `table` of `columns`, one parameter each, then one instant written as
 * both created_at and updated_at: a new row as most tables keep it.
 */
export function stampedShape(key: string, table: string, columns: readonly string[]): RowsShape {
  return {
    key,
    arity: columns.length + 1,
    tuple(first) {
      const at = `$${first + columns.length}`;
      return `(${columns.map((_, i) => `$${first + i}`).join(', ')}, ${at}, ${at})`;
    },
    around: (tuples) =>
      `INSERT INTO ${table} (${columns.join(', ')}, created_at, updated_at) VALUES ${tuples}`,
  };
}
