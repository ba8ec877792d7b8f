import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db, Queryable, Tx } from '../db/db.js';
import { eventInsert } from '../notifications/index.js';
import { every } from '../periodic.js';
import { announceExpiredPages, UNANNOUNCED_PAGE } from '../subscriptions/index.js';
import { claimExpiredCtps, EXPIRED_MESSAGE, UNANNOUNCED_CTP } from './api/repository.js';
import { ctpExpiryAnnouncement } from './api/service.js';

/**
 * The expiry of checkout tokens nobody paid, announced once: a subscription's hosted page (to the
 * subscription's notification_url, event `checkout_expired.subscription`) and a checkout of the
 * checkout API (to its settings.notification_url, `{"checkout": {..., "status": "error", "message":
 * "Token is expired."}}`, event `expired.checkout`). Each batch claims its rows with SKIP LOCKED and
 * marks them announced in the transaction that writes their events, so any number of instances may
 * sweep at once and each expiry is announced exactly once. Expiry is on each shop's own clock.
 */

const BATCH = 100;

export type SweepDeps = { db: Db; clock: Clock; config: Pick<Config, 'checkoutUrl'> };

async function announceCtps(tx: Tx, deps: SweepDeps, realNow: Date, shopId?: number): Promise<number> {
  const rows = await claimExpiredCtps(tx, realNow, BATCH, shopId);
  for (const row of rows) {
    const s = eventInsert(ctpExpiryAnnouncement(row, deps.config.checkoutUrl, row.expires_at));
    await tx.query(s);
  }
  return rows.length;
}

/**
 * Announces every expiry due now (only `shopId`'s, when given: a test clock's advance); returns how
 * many tokens it announced.
 */
export async function sweepExpiredCheckouts(deps: SweepDeps, shopId?: number): Promise<number> {
  let total = 0;
  for (;;) {
    const realNow = deps.clock.now();
    const n = await deps.db.tx(async (tx) => {
      const pages = await announceExpiredPages(tx, realNow, BATCH, EXPIRED_MESSAGE, shopId);
      const ctps = await announceCtps(tx, deps, realNow, shopId);
      return pages + ctps;
    });
    total += n;
    if (n === 0) return total;
  }
}

/**
 * When the shop's next unannounced token expires (its own time), if any: where a test clock's advance
 * stops to announce it. The same rows the sweep's claims take, so a stop always finds its work.
 */
export async function nextExpiryOfShop(db: Queryable, shopId: number): Promise<Date | undefined> {
  const [row] = await db.query<{ at: Date | null }>(
    `SELECT least(
       (SELECT min(c.expires_at) FROM checkouts c WHERE c.shop_id = $1 AND ${UNANNOUNCED_PAGE}),
       (SELECT min(c.expires_at) FROM ctp_checkouts c WHERE c.shop_id = $1 AND ${UNANNOUNCED_CTP})) AS at`,
    [shopId],
  );
  return row?.at ?? undefined;
}

/** The sweep of a serving process, every `everyMs`. Returns the function that stops it. */
export function startCheckoutExpirySweep(
  deps: SweepDeps & { log: FastifyBaseLogger },
  everyMs = 30_000,
): () => void {
  return every(everyMs, deps.log, 'announced expired checkout tokens', () => sweepExpiredCheckouts(deps));
}
