import type { Email } from '../../mail/service.js';
import { Details, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Pager } from '../paging.js';
import { Select, When, zoneLabel } from '../settings/controls.js';
import { cabinetTexts } from '../texts.js';
import type { EmailListRow } from './repository.js';
import { EMAIL_KINDS, EMAIL_STATUSES, emailTexts } from './texts.js';

export interface EmailQuery {
  status: string;
  kind: string;
  to: string;
  after?: string | undefined;
}

type T = ReturnType<typeof emailTexts>;
const label = (t: T, key: string) => (t as Record<string, string>)[key] ?? key;

export function EmailStatusBadge({ status, t }: { status: string; t: T }) {
  return <span class={`badge ${status}`}>{label(t, status)}</span>;
}

export function EmailListPage(p: {
  cabinet: CabinetContext;
  query: EmailQuery;
  rows: EmailListRow[];
  next: number | undefined;
  errors: { status?: string | undefined; kind?: string | undefined };
  now: Date;
}) {
  const { cabinet, query } = p;
  const t = emailTexts(cabinet.lang);
  const c = cabinetTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const filtered = query.status !== '' || query.kind !== '' || query.to !== '';
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="emails">
      <p class="muted">{t.intro}</p>
      <form method="get" action="/cabinet/emails" class="filters">
        <Select
          name="status"
          label={t.status}
          value={query.status}
          options={[['', t.any], ...EMAIL_STATUSES.map((s) => [s, label(t, s)] as const)]}
          error={p.errors.status}
        />
        <Select
          name="kind"
          label={t.kind}
          value={query.kind}
          options={[['', t.any], ...EMAIL_KINDS.map((k) => [k, label(t, k)] as const)]}
          error={p.errors.kind}
        />
        <Field
          name="to"
          label={t.recipient}
          type="email"
          value={query.to}
          hint={t.recipientHint}
          maxLength={254}
        />
        <button type="submit">{c.filter}</button>
        {filtered && <a href="/cabinet/emails">{c.reset}</a>}
      </form>
      {p.rows.length === 0 ? (
        <p class="empty">{filtered ? t.none : t.noneAtAll}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="muted">{fill(t.times, { zone: zoneLabel(zone, p.now) })}</caption>
            <thead>
              <tr>
                <th scope="col">{t.subject}</th>
                <th scope="col">{t.recipient}</th>
                <th scope="col">{t.kind}</th>
                <th scope="col">{t.language}</th>
                <th scope="col">{t.status}</th>
                <th scope="col">{t.created}</th>
              </tr>
            </thead>
            <tbody>
              {p.rows.map((e) => (
                <tr>
                  <td>
                    <a href={`/cabinet/emails/${e.id}`}>{e.subject}</a>
                  </td>
                  <td class="copy">{e.recipient}</td>
                  <td>{label(t, e.kind)}</td>
                  <td>{e.language}</td>
                  <td>
                    <EmailStatusBadge status={e.status} t={t} />
                  </td>
                  <td>
                    <When at={e.created_at} zone={zone} lang={cabinet.lang} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager lang={cabinet.lang} path="/cabinet/emails" query={{ ...query }} next={p.next} />
    </CabinetPage>
  );
}

export function EmailPage({ cabinet, email, now }: { cabinet: CabinetContext; email: Email; now: Date }) {
  const t = emailTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const when = (at: string | null) => <When at={at} zone={zone} lang={cabinet.lang} />;
  return (
    <CabinetPage cabinet={cabinet} title={email.subject} section="emails">
      <p>
        <a href="/cabinet/emails">← {t.back}</a>
      </p>
      {email.status === 'kept' && (
        <p class="notice" role="note">
          {t.keptNote}
        </p>
      )}
      <Details
        rows={
          [
            [t.recipient, <span class="copy">{email.to}</span>],
            [t.kind, label(t, email.kind)],
            [t.language, email.language],
            [t.status, <EmailStatusBadge status={email.status} t={t} />],
            [t.attempts, String(email.attempts)],
            ...(email.next_attempt_at
              ? [[t.nextAttempt, when(email.next_attempt_at)] as [string, unknown]]
              : []),
            ...(email.sent_at ? [[t.sentAt, when(email.sent_at)] as [string, unknown]] : []),
            ...(email.last_error ? [[t.lastError, email.last_error] as [string, unknown]] : []),
            [t.event, <span class="copy">{email.event_id}</span>],
            [t.created, when(email.created_at)],
          ] as Array<[string, preact.ComponentChildren]>
        }
      />
      <p class="muted">{fill(t.times, { zone: zoneLabel(zone, now) })}</p>
      <h2>{t.textVersion}</h2>
      <pre class="email-text">{email.text}</pre>
      <h2>{t.htmlVersion}</h2>
      <p class="hint">{t.htmlNote}</p>
      <iframe
        class="email-html"
        title={t.htmlFrame}
        src={`/cabinet/emails/${email.id}/html`}
        sandbox=""
        referrerpolicy="no-referrer"
      />
      <details>
        <summary>{t.htmlSource}</summary>
        <pre class="email-source">{email.html}</pre>
      </details>
    </CabinetPage>
  );
}
