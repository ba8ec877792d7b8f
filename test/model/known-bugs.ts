import type { Queryable } from '../../src/db/db.js';
import type { Violation } from './invariants.js';

/**
 * Bugs the random histories found in today's code, each with its signature in the store: the
 * subscriptions it has touched and the checks it breaks there. The main property tolerates exactly
 * those violations, so it keeps guarding everything else; each bug's own test (`it.fails`) replays
 * its minimal history without tolerance and passes once the bug is fixed (then delete the entry).
 */
export interface KnownBug {
  name: string;
  /** The checks it breaks on a touched subscription; '*' for all (its effects cascade). */
  checks: readonly string[] | '*';
  /** The touched subscriptions of shop $1, as rows `{ sub }`. */
  touched: string;
}

export const KNOWN_BUGS: readonly KnownBug[] = [];

/** `found` without the violations that `bugs` explain. */
export async function unexplained(
  db: Queryable,
  shopId: number,
  found: Violation[],
  bugs: readonly KnownBug[],
): Promise<Violation[]> {
  let left = found;
  for (const bug of bugs) {
    if (left.length === 0) break;
    const touched = new Set((await db.query<{ sub: string }>(bug.touched, [shopId])).map((r) => r.sub));
    left = left.filter((f) => !(touched.has(f.sub) && (bug.checks === '*' || bug.checks.includes(f.check))));
  }
  return left;
}
