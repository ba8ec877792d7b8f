import type { Queryable, Tx } from '../db/db.js';
import {
  changeStatus,
  insertTransaction,
  type NewTransaction,
  type StatusChange,
  storedTransactionRow,
  type TransactionRow,
} from '../ledger/index.js';
import { type Announcement, eventInsert } from '../notifications/index.js';
import { type TransactionAnswer, toAnswer } from './answer.js';

/**
 * Transaction events: every payment, authorization, capture, void, refund and credit announces the
 * status it reaches, `<status>.transaction`, in the statement or transaction that writes it. The body
 * is the gateway's answer as the platform sends it, `{"transaction": {...}}`, with Kopek's `event`
 * beside it (decisions.md, Notifications), so `transaction` stays exactly what the API answers and
 * clients that read only `transaction` are not disturbed. Pending is no outcome yet: it is announced
 * when it ends. An event goes to the transaction's notification_url when it has one; without one it
 * is kept for the record and for the shop's e-mail.
 */

export type TransactionEvent = `${Exclude<TransactionRow['status'], 'pending'>}.transaction`;

/** The event announcing `row` as `answer` shows it; undefined while it is pending. */
export function transactionAnnouncement(
  row: TransactionRow,
  answer: TransactionAnswer,
): Announcement | undefined {
  if (row.status === 'pending') return undefined;
  const event: TransactionEvent = `${row.status}.transaction`;
  return {
    shopId: row.shop_id,
    resourceType: 'transaction',
    resourceId: row.uid,
    event,
    payload: { transaction: answer, event },
    url: row.notification_url,
    now: row.updated_at,
  };
}

/** Records a new transaction and the event announcing it, in one statement. */
export function insertAnnounced(
  db: Queryable,
  t: NewTransaction,
  now: Date,
  gatewayUrl: string,
): Promise<TransactionRow> {
  const row = storedTransactionRow(t, now);
  return insertTransaction(db, t, now, transactionAnnouncement(row, toAnswer(row, gatewayUrl)));
}

/** Moves a locked transaction to a new status and announces it, in the caller's transaction. */
export async function changeAnnounced(
  tx: Tx,
  uid: string,
  change: StatusChange,
  now: Date,
  gatewayUrl: string,
): Promise<TransactionRow> {
  const row = await changeStatus(tx, uid, change, now);
  const announcement = transactionAnnouncement(row, toAnswer(row, gatewayUrl));
  if (announcement) {
    const s = eventInsert(announcement);
    await tx.query(s);
  }
  return row;
}
