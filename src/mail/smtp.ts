import type { Transporter } from 'nodemailer';
import { oneLine } from './render.js';

/** One e-mail as it leaves Kopek. */
export interface OutgoingMail {
  /** Also the Message-ID's local part: a repeat after a lost answer can be recognised as the same. */
  id: string;
  fromName: string;
  to: string;
  replyTo: string | null;
  subject: string;
  text: string;
  html: string;
  language: string;
}

/** Where e-mails go; SMTP in production, anything in a test. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/**
 * A sender over the SMTP server at `url` (smtp:// or smtps://, credentials in the URL). Its
 * timeouts keep one attempt well inside the sender's lease, so an attempt still running is never
 * taken over by another instance.
 */
export function smtpSender(url: string, from: string): MailSender {
  // The transport (and nodemailer itself) is loaded with the first e-mail sent: a process that sends
  // none, or runs without SMTP_URL, does not carry it.
  let transport: Promise<Transporter> | undefined;
  let closed = false;
  const open = () =>
    (transport ??= import('nodemailer').then(({ createTransport }) => {
      const t = createTransport({
        url,
        pool: true,
        maxConnections: 5,
        connectionTimeout: 30_000,
        greetingTimeout: 30_000,
        socketTimeout: 60_000,
      });
      // Closed while it was loading: it opens no connection that nothing would close.
      if (closed) t.close();
      return t;
    }));
  const domain = from.slice(from.lastIndexOf('@') + 1);
  return {
    async send(mail) {
      await (await open()).sendMail({
        from: { name: oneLine(mail.fromName, 100), address: from },
        to: mail.to,
        ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${mail.id}@${domain}>`,
        headers: { 'Content-Language': mail.language },
      });
    },
    close() {
      closed = true;
      void transport?.then((t) => t.close());
    },
  };
}

/**
 * What went wrong, for the shop to read: the receiving server's own answer when there was one,
 * otherwise only the kind of failure. A connection error's text names the SMTP server's address,
 * which is the operator's business, not the shop's (it goes to the log instead).
 */
export function sendError(err: unknown): { message: string; permanent: boolean } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    responseCode?: unknown;
    response?: unknown;
    code?: unknown;
    command?: unknown;
  };
  if (typeof e.responseCode === 'number') {
    const answer = typeof e.response === 'string' ? e.response : '';
    // A 5xx refusal of the recipient or of the message is the server's final word: trying again
    // cannot change it. Any other (4xx, or a 5xx to the login: the operator's settings) may pass later.
    const refused = e.command === 'RCPT TO' || e.command === 'DATA';
    const permanent = refused && e.responseCode >= 500 && e.responseCode < 600;
    return { message: oneLine(`SMTP ${e.responseCode}: ${answer}`, 500), permanent };
  }
  // The system's own code (ECONNREFUSED, ETIMEDOUT) says more than nodemailer's ESOCKET.
  const system = err instanceof Error ? err.message.match(/\bE[A-Z]{3,}\b/)?.[0] : undefined;
  const code = system ?? (typeof e.code === 'string' ? e.code : undefined);
  return { message: `SMTP server could not be reached${code ? ` (${code})` : ''}`, permanent: false };
}
