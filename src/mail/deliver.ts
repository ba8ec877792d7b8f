import type { Services } from '../context.js';
import { type ClaimedEmail, claimDueEmails, finishAttempt, type SendOutcome } from './repository.js';
import { type MailSender, sendError } from './smtp.js';

/**
 * The sender: claims due e-mails (SKIP LOCKED, a lease on real time), sends each outside any
 * transaction, then records the outcome. A send whose answer is lost (a crash after the server took
 * the message) is sent again after the lease: delivery is at least once, with the same Message-ID.
 */

/** How long a claimed e-mail is held: well beyond the SMTP timeouts of one attempt. */
export const MAIL_LEASE_MS = 5 * 60_000;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The wait after the nth failed attempt; after the last, the e-mail has failed (about three days in all). */
export const MAIL_RETRY_DELAYS_MS = [
  MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  24 * HOUR,
];
export const MAIL_MAX_ATTEMPTS = MAIL_RETRY_DELAYS_MS.length + 1;

export interface SendSummary {
  sent: number;
  retried: number;
  failed: number;
}

export interface SendOptions {
  shopId?: number;
  batchSize?: number;
}

/** Sends everything due now, batch after batch, until nothing is due. */
export async function sendDueEmails(
  services: Services,
  sender: MailSender,
  opts: SendOptions = {},
): Promise<SendSummary> {
  const summary: SendSummary = { sent: 0, retried: 0, failed: 0 };
  for (;;) {
    const now = services.clock.now();
    const claimed = await services.db.tx((tx) =>
      claimDueEmails(tx, now, opts.batchSize ?? 10, MAIL_LEASE_MS, opts.shopId),
    );
    if (claimed.length === 0) return summary;
    const outcomes = await Promise.all(claimed.map((e) => attempt(services, sender, e)));
    for (const o of outcomes) {
      if (o.status === 'sent') summary.sent++;
      else if (o.status === 'pending') summary.retried++;
      else summary.failed++;
    }
  }
}

async function attempt(services: Services, sender: MailSender, e: ClaimedEmail): Promise<SendOutcome> {
  const outcome = await send(services, sender, e);
  await finishAttempt(services.db, e.id, e.attempts, outcome);
  return outcome;
}

async function send(services: Services, sender: MailSender, e: ClaimedEmail): Promise<SendOutcome> {
  try {
    await sender.send({
      id: e.id,
      fromName: e.shop_name,
      to: e.recipient,
      // A customer's answer to a receipt goes to the shop; the shop's own notices need none.
      replyTo: e.kind === 'transaction' ? null : e.reply_to,
      subject: e.subject,
      text: e.text,
      html: e.html,
      language: e.language,
    });
    return { status: 'sent', at: shopNow(services, e) };
  } catch (err) {
    const { message, permanent } = sendError(err);
    services.log.warn({ err, emailId: e.id, attempt: e.attempts }, 'e-mail not sent');
    if (permanent || e.attempts >= MAIL_MAX_ATTEMPTS) return { status: 'failed', error: message };
    const delay = MAIL_RETRY_DELAYS_MS[e.attempts - 1] ?? (MAIL_RETRY_DELAYS_MS.at(-1) as number);
    return { status: 'pending', retryAt: new Date(shopNow(services, e).getTime() + delay), error: message };
  }
}

/** The e-mail's shop's clock: due times and sent_at are on it, as everything a test shop sees. */
function shopNow(services: Services, e: ClaimedEmail): Date {
  return new Date(services.clock.now().getTime() + Number(e.clock_offset_ms));
}
