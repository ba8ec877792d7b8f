import { Counter, Gauge, type Registry } from 'prom-client';
import type { Services } from '../context.js';
import { loop } from '../periodic.js';
import { type MailSummary, mailDue } from './service.js';
import { smtpSender } from './smtp.js';

export type MailObserver = (summary: MailSummary) => void;

/** E-mail's metrics: e-mails written, sent, retried and failed, and how many wait to be sent. */
export function mailMetrics(registry: Registry, services: Pick<Services, 'db'>): MailObserver {
  const counted = new Counter({
    name: 'kopek_emails_total',
    help: 'E-mails written by the fan-out, and attempts to send them by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'kopek_emails_pending',
    help: 'E-mails waiting to be sent (a growing number: the SMTP server refuses or is unreachable)',
    registers: [registry],
    async collect() {
      const [row] = await services.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM emails WHERE status = 'pending'`,
      );
      this.set(row?.n ?? 0);
    },
  });
  return (s) => {
    for (const outcome of ['written', 'sent', 'retried', 'failed'] as const) {
      if (s[outcome] > 0) counted.labels(outcome).inc(s[outcome]);
    }
  };
}

/**
 * Runs e-mail inside `kopek serve`: every `everyMs`, waiting events become e-mails and due e-mails
 * are sent (or kept, without SMTP_URL). Runs never overlap within a process; other instances take
 * disjoint work (SKIP LOCKED). One SMTP sender, with its pooled connections, serves every run.
 * Returns a stop function that resolves once a run in progress has finished.
 */
export function startMail(services: Services, everyMs: number, observe?: MailObserver): () => Promise<void> {
  const { smtpUrl, mailFrom } = services.config;
  const sender = smtpUrl === undefined ? undefined : smtpSender(smtpUrl, mailFrom);
  const stop = loop(everyMs, services.log, 'e-mail run', async () => {
    const s = await mailDue(services, sender ? { sender } : {});
    observe?.(s);
    if (s.written + s.sent + s.failed > 0) services.log.info({ mail: s }, 'e-mail run');
  });
  return async () => {
    await stop();
    sender?.close();
  };
}
