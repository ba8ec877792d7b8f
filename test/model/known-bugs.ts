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

/**
 * Found with seed 1744763308, path "66:3:3:4:4": Create(card, monthly, firstThenDeclined),
 * KillBilling, Cancel(#0), then the leases run out. The billing engine resolves an open attempt only
 * when its subscription falls due, and a cancelled one never does. A cancel now first settles an
 * attempt whose answer the gateway already has (as a read does), which mends that history; still
 * open: an attempt of unknown outcome (the gateway's answer is pending, e.g. the timeout card) or one
 * that never reached the gateway stays pending or unknown for good once its subscription is
 * cancelled (seeds 11 and 12: Create(card, monthly, timeout), Cancel(#0), Restart).
 */
export const CANCELLED_ATTEMPT_LEFT_OPEN: KnownBug = {
  name: 'an attempt a dead billing process left open is never resolved once its subscription is cancelled',
  checks: ['e.left_open'],
  touched: `SELECT DISTINCT c.subscription_id AS sub FROM subscription_charges c
    JOIN subscriptions s ON s.id = c.subscription_id AND s.shop_id = $1
    WHERE s.cancelled_at IS NOT NULL AND c.status IN ('pending', 'unknown')`,
};

export const KNOWN_BUGS: readonly KnownBug[] = [CANCELLED_ATTEMPT_LEFT_OPEN];

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
