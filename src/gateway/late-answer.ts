import type { Tx } from '../db/db.js';
import type { TransactionRow } from '../ledger/index.js';
import { changeAnnounced } from './announce.js';
import { type GatewayType, PROCESSED, sectionFor } from './answer.js';
import { LATE_ANSWER_MS } from './test-cards.js';

/** Whether a transaction is the timeout card's, still waiting for the acquirer's late answer. */
export function awaitsLateAnswer(row: TransactionRow, now: Date): boolean {
  return (
    row.status === 'pending' &&
    row.details.acquirer_timeout === true &&
    now.getTime() - row.created_at.getTime() >= LATE_ANSWER_MS
  );
}

/**
 * The timeout card's acquirer answers late: from LATE_ANSWER_MS after the charge, whoever looks at the
 * transaction (a query, a refund of it) sees it successful. The money did move, which is exactly why a
 * caller must query before charging again. `row` must be locked by the caller's transaction, which
 * also writes the event announcing the new status.
 */
export async function settleLateAnswer(
  tx: Tx,
  row: TransactionRow,
  now: Date,
  gatewayUrl: string,
): Promise<TransactionRow> {
  if (!awaitsLateAnswer(row, now)) return row;
  const type = row.type as GatewayType;
  return changeAnnounced(
    tx,
    row.uid,
    {
      status: 'successful',
      message: PROCESSED,
      paidAt: type === 'authorization' ? null : now,
      details: {
        section: sectionFor(type, 'successful', null),
        acquirer_timeout: false,
        answered_late: true,
      },
    },
    now,
    gatewayUrl,
  );
}
