import type { Email } from '../../mail/index.js';
import { Details, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { FilterBar, type ListPageProps, ListTable } from '../list.js';
import { Pager } from '../paging.js';
import { When, zoneLabel } from '../settings/controls.js';
import { Code, languageName, Verbatim } from '../words.js';
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

export function EmailListPage(
  p: ListPageProps<EmailQuery, EmailListRow> & {
    errors: { status?: string | undefined; kind?: string | undefined };
  },
) {
  const { cabinet, query } = p;
  const t = emailTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const filtered = query.status !== '' || query.kind !== '' || query.to !== '';
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="emails">
      <p class="muted">{t.intro}</p>
      <FilterBar action="/cabinet/emails" active={filtered} lang={cabinet.lang}>
        <Field
          name="status"
          label={t.status}
          value={query.status}
          options={[['', t.any], ...EMAIL_STATUSES.map((s) => [s, label(t, s)] as const)]}
          error={p.errors.status}
        />
        <Field
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
      </FilterBar>
      <ListTable
        caption={fill(t.times, { zone: zoneLabel(zone, p.now) })}
        captionClass="muted"
        empty={filtered ? t.none : t.noneAtAll}
        emptyClass="empty"
        rows={p.rows}
        columns={[
          {
            label: t.subject,
            cell: (e) => (
              <a href={`/cabinet/emails/${e.id}`} lang={e.language}>
                {e.subject}
              </a>
            ),
          },
          { label: t.recipient, cellClass: 'copy', cell: (e) => e.recipient },
          { label: t.kind, cell: (e) => label(t, e.kind) },
          { label: t.language, cell: (e) => languageName(e.language, cabinet.lang) },
          { label: t.status, cell: (e) => <EmailStatusBadge status={e.status} t={t} /> },
          { label: t.created, cell: (e) => <When at={e.created_at} zone={zone} lang={cabinet.lang} /> },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/emails" query={{ ...query }} next={p.next} />
    </CabinetPage>
  );
}

export function EmailPage({ cabinet, email, now }: { cabinet: CabinetContext; email: Email; now: Date }) {
  const t = emailTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const when = (at: string | null) => <When at={at} zone={zone} lang={cabinet.lang} />;
  return (
    <CabinetPage
      cabinet={cabinet}
      // In the page's language the subject is the title; in another, it is marked as such in the heading.
      title={email.language === cabinet.lang ? email.subject : fill(t.detailTitle, { id: email.id })}
      heading={<span lang={email.language}>{email.subject}</span>}
      section="emails"
    >
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
            [t.language, languageName(email.language, cabinet.lang)],
            [t.status, <EmailStatusBadge status={email.status} t={t} />],
            [t.attempts, String(email.attempts)],
            ...(email.next_attempt_at
              ? [[t.nextAttempt, when(email.next_attempt_at)] as [string, unknown]]
              : []),
            ...(email.sent_at ? [[t.sentAt, when(email.sent_at)] as [string, unknown]] : []),
            ...(email.last_error
              ? [[t.lastError, <Code>{email.last_error}</Code>] as [string, unknown]]
              : []),
            [t.event, <span class="copy">{email.event_id}</span>],
            [t.created, when(email.created_at)],
          ] as Array<[string, preact.ComponentChildren]>
        }
      />
      <p class="muted">{fill(t.times, { zone: zoneLabel(zone, now) })}</p>
      <h2>{t.textVersion}</h2>
      <pre class="email-text" lang={email.language}>
        {email.text}
      </pre>
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
        <Verbatim class="email-source">{email.html}</Verbatim>
      </details>
    </CabinetPage>
  );
}
