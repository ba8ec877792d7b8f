import type { EmailRow, EmailStatus } from '../../mail/index.js';
import { type ListStore, walkIndex } from '../query.js';

/**
 * The cabinet's page of a shop's e-mails: newest first by seq (keyset, LIMIT size + 1), each filter
 * served by an index of 022_cabinet_notifications.sql so a page stays cheap with a million e-mails.
 * The text and HTML bodies are left out: a list shows neither.
 */
export interface EmailListRow extends Omit<EmailRow, 'text' | 'html'> {
  seq: number | string;
}

export interface CabinetEmailFilter {
  status?: EmailStatus | undefined;
  kind?: string | undefined;
  to?: string | undefined;
}

export function listEmailPage(
  db: ListStore,
  shopId: number,
  filter: CabinetEmailFilter,
  limit: number,
  beforeSeq: number | undefined,
): Promise<EmailListRow[]> {
  const params: unknown[] = [shopId, limit + 1];
  const where = ['shop_id = $1'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(`${sql} $${params.length}`);
  };
  if (filter.status !== undefined) add('status =', filter.status);
  if (filter.kind !== undefined) add('kind =', filter.kind);
  if (filter.to !== undefined) add('lower(recipient) =', filter.to.toLowerCase());
  if (beforeSeq !== undefined) add('seq <', beforeSeq);
  return walkIndex<EmailListRow>(
    db,
    `SELECT seq, id, shop_id, event_id, kind, about, recipient, subject, language, status, attempts,
       next_attempt_at, leased_until, sent_at, last_error, created_at
     FROM emails WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $2`,
    params,
  );
}
