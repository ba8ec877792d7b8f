import { isoString } from '../clock.js';
import type { Ctx, Services } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { ListParams } from '../core/paging.js';
import { isId } from '../ids.js';
import { type SendSummary, sendDueEmails } from './deliver.js';
import { fanOutEvents } from './fanout.js';
import { type EmailFilter, type EmailRow, findEmail, listEmails } from './repository.js';
import { type MailSender, smtpSender } from './smtp.js';

export interface MailSummary extends SendSummary {
  /** E-mails the events that waited called for. */
  written: number;
}

export interface MailOptions {
  shopId?: number;
  /** The serving process keeps one sender (and its connections); without one, each run opens its own. */
  sender?: MailSender;
}

/**
 * One run of e-mail: every waiting event becomes its e-mails, then, with an SMTP server
 * configured, everything due is sent. Without one, e-mails are kept and nothing is sent.
 */
export async function mailDue(services: Services, opts: MailOptions = {}): Promise<MailSummary> {
  const written = await fanOutEvents(services, opts);
  const url = services.config.smtpUrl;
  if (url === undefined) return { written, sent: 0, retried: 0, failed: 0 };
  const sender = opts.sender ?? smtpSender(url, services.config.mailFrom);
  try {
    return { written, ...(await sendDueEmails(services, sender, opts)) };
  } finally {
    if (!opts.sender) sender.close();
  }
}

/** An e-mail as the API shows it. */
export interface Email {
  id: string;
  kind: string;
  /** The event that called for it, as notifications name it (`evt_` and its number). */
  event_id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  language: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  sent_at: string | null;
  last_error: string | null;
  created_at: string;
}

const iso = (d: Date | null) => (d ? isoString(d) : null);

export function toEmail(r: EmailRow): Email {
  return {
    id: r.id,
    kind: r.kind,
    event_id: `evt_${r.event_id}`,
    to: r.recipient,
    subject: r.subject,
    text: r.text,
    html: r.html,
    language: r.language,
    status: r.status,
    attempts: r.attempts,
    next_attempt_at: iso(r.next_attempt_at),
    sent_at: iso(r.sent_at),
    last_error: r.last_error,
    created_at: isoString(r.created_at),
  };
}

export async function listEmailsOfShop(ctx: Ctx, params: ListParams, filter: EmailFilter): Promise<Email[]> {
  const rows = await listEmails(ctx.db, ctx.shop.id, params, filter);
  return rows.map(toEmail);
}

export async function getEmail(ctx: Ctx, id: string): Promise<Email> {
  // A malformed id names nothing: 404 as for an unknown one, without asking the store.
  const row = isId('eml', id) ? await findEmail(ctx.db, ctx.shop.id, id) : undefined;
  if (!row) throw ApiError.notFound();
  return toEmail(row);
}
