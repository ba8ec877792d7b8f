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

export const THREE_DS_CHARGED_AGAIN: KnownBug = {
  name: 'a first charge waiting for 3-D Secure is overtaken by a billing charge once its lease runs out',
  checks: '*',
  // An attempt whose transaction waited for the cardholder's 3-D Secure step, and a newer attempt
  // claimed behind it (the same period again, or the first regular period behind a trial's charge).
  touched: `SELECT DISTINCT o.subscription_id AS sub FROM subscription_charges o
    JOIN subscriptions s ON s.id = o.subscription_id AND s.shop_id = $1
    JOIN subscription_charges n ON n.subscription_id = o.subscription_id
      AND (n.period > o.period OR n.period = o.period AND n.attempt > o.attempt)
    WHERE EXISTS (SELECT 1 FROM transactions t WHERE t.uid = o.transaction_uid AND t.status = 'incomplete')
      OR EXISTS (SELECT 1 FROM transaction_history th WHERE th.uid = o.transaction_uid AND th.status = 'incomplete')`,
};

export const TRIAL_RETRY_UNANNOUNCED: KnownBug = {
  name: 'a trial renewal declined step by step goes back to trial without an event',
  checks: ['d.state_announced'],
  touched: `SELECT s.id AS sub FROM subscriptions s
    WHERE s.shop_id = $1 AND s.state = 'trial' AND (
      SELECT e.event || ':' || (e.payload->>'state') FROM events e
      WHERE e.resource_id = s.id ORDER BY e.id DESC LIMIT 1) = 'trial_ended.subscription:trial_processing'`,
};

export const CANCELLED_ATTEMPT_LEFT_OPEN: KnownBug = {
  name: 'an attempt a dead billing process left open is never resolved once its subscription is cancelled',
  checks: ['e.left_open'],
  touched: `SELECT DISTINCT c.subscription_id AS sub FROM subscription_charges c
    JOIN subscriptions s ON s.id = c.subscription_id AND s.shop_id = $1
    WHERE s.cancelled_at IS NOT NULL AND c.status IN ('pending', 'unknown')`,
};

export const KNOWN_BUGS: readonly KnownBug[] = [
  THREE_DS_CHARGED_AGAIN,
  TRIAL_RETRY_UNANNOUNCED,
  CANCELLED_ATTEMPT_LEFT_OPEN,
];

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
