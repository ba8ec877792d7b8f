import type { TransactionAnswer } from '../gateway/client.js';

/** A subscription's last transaction, as the API shows it and the row keeps it. */
export interface TransactionSummary {
  uid: string;
  status: string;
  message: string | null;
  created_at: string;
  redirect_url?: string;
}

export function summarize(t: TransactionAnswer): TransactionSummary {
  return {
    uid: t.uid,
    status: t.status,
    message: t.message,
    created_at: t.created_at,
    ...(t.status === 'incomplete' && t.redirect_url ? { redirect_url: t.redirect_url } : {}),
  };
}
