import type pg from 'pg';

/**
 * What EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) says a statement read: the rows every scan of a table
 * or index returned or threw away, over all its loops, and the buffers it touched, against the rows
 * the statement returned (a claim's RETURNING: what it claimed).
 */
export interface PlanReading {
  /** Rows the statement returned. */
  claimed: number;
  /** Rows read by the scans of tables and indexes: returned or removed by a filter, all loops. */
  rowsRead: number;
  /** Shared buffers hit or read. */
  buffers: number;
  /** Each scan with its rows, for a failure's message. */
  describe(): string;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Rows Removed by Join Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** Scans of a table or an index (not of a CTE's, a function's or a subquery's rows in memory). */
const READS_STORE = /^(Seq Scan|Index Scan|Index Only Scan|Bitmap Heap Scan|Tid Scan|Tid Range Scan)$/;

/**
 * Runs `sql` with `params` under EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) as a prepared statement
 * executed once, as a deliverer runs it (its plan made as the session's settings say, e.g. a generic
 * one). It runs for real: call it in a transaction that is rolled back.
 */
export async function explainAnalyze(
  client: pg.Client,
  sql: string,
  params: readonly unknown[],
): Promise<PlanReading> {
  const name = `explained_${Math.random().toString(36).slice(2)}`;
  await client.query(`PREPARE ${name} AS ${sql}`);
  const literals = params.map(literal);
  const args = literals.length > 0 ? `(${literals.join(', ')})` : '';
  const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE ${name}${args}`,
  );
  await client.query(`DEALLOCATE ${name}`);
  const top = (rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
  const scans: string[] = [];
  let rowsRead = 0;
  const walk = (node: PlanNode) => {
    if (READS_STORE.test(node['Node Type'])) {
      const perLoop =
        node['Actual Rows'] +
        (node['Rows Removed by Filter'] ?? 0) +
        (node['Rows Removed by Index Recheck'] ?? 0);
      const read = perLoop * node['Actual Loops'];
      rowsRead += read;
      scans.push(`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name'] ?? ''}: ${read}`);
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(top);
  const claimed = top['Actual Rows'];
  const buffers = (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
  return {
    claimed,
    rowsRead,
    buffers,
    describe: () => `${claimed} claimed, ${rowsRead} rows read, ${buffers} buffers; ${scans.join('; ')}`,
  };
}

/** A parameter written into EXECUTE's arguments: the values a claim takes (times, numbers, arrays). */
function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (v instanceof Date) return `'${v.toISOString()}'`;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`not a number to write: ${v}`);
    return String(v);
  }
  if (Array.isArray(v))
    return `'{${v.map((x) => (typeof x === 'number' ? String(x) : JSON.stringify(x))).join(',')}}'`;
  if (typeof v === 'string') return `'${v.replaceAll("'", "''")}'`;
  throw new Error(`a parameter of type ${typeof v} cannot be written here`);
}
