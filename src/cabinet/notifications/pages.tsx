import type { NotificationView } from '../../notifications/index.js';
import { CsrfField, Details, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { FilterBar, type ListPageProps, ListTable } from '../list.js';
import { Pager } from '../paging.js';
import { When, zoneLabel } from '../settings/controls.js';
import { Code, EventName, fillParts, Verbatim } from '../words.js';
import { notificationTexts } from './texts.js';

export interface ListQuery {
  status: string;
  event: string;
  resource_id: string;
  after?: string | undefined;
}

export function statusOptions(t: ReturnType<typeof notificationTexts>) {
  return [
    ['', t.any],
    ['pending', t.pending],
    ['delivered', t.deliveredStatus],
    ['failed', t.failed],
  ] as const;
}

export function StatusBadge({ status, lang }: { status: string; lang: CabinetContext['lang'] }) {
  const t = notificationTexts(lang);
  const label = status === 'delivered' ? t.deliveredStatus : status === 'failed' ? t.failed : t.pending;
  return <span class={`badge ${status}`}>{label}</span>;
}

export function NotificationListPage(
  p: ListPageProps<ListQuery, NotificationView> & { statusError?: string | undefined },
) {
  const { cabinet, query } = p;
  const t = notificationTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const filtered = query.status !== '' || query.event !== '' || query.resource_id !== '';
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="notifications">
      <p class="muted">{t.intro}</p>
      <FilterBar action="/cabinet/notifications" active={filtered} lang={cabinet.lang}>
        <Field
          name="status"
          label={t.status}
          value={query.status}
          options={statusOptions(t)}
          error={p.statusError}
        />
        <Field
          name="event"
          label={t.event}
          value={query.event}
          hint={fillParts(t.eventHint, { example: <Code>renewed.subscription</Code> })}
          maxLength={100}
        />
        <Field
          name="resource_id"
          label={t.resource}
          value={query.resource_id}
          hint={t.resourceHint}
          maxLength={100}
        />
      </FilterBar>
      <ListTable
        caption={fill(t.times, { zone: zoneLabel(zone, p.now) })}
        captionClass="muted"
        empty={filtered ? t.none : t.noneAtAll}
        emptyClass="empty"
        rows={p.rows}
        columns={[
          { label: t.id, cell: (n) => <a href={`/cabinet/notifications/${n.id}`}>{n.id}</a> },
          { label: t.event, cell: (n) => <EventName event={n.event} lang={cabinet.lang} /> },
          {
            label: t.resource,
            cellClass: 'copy',
            cell: (n) => (
              <a href={`/cabinet/notifications?resource_id=${encodeURIComponent(n.resource_id)}`}>
                {n.resource_id}
              </a>
            ),
          },
          { label: t.status, cell: (n) => <StatusBadge status={n.status} lang={cabinet.lang} /> },
          { label: t.attempts, num: true, cell: (n) => n.attempt_count },
          {
            label: t.nextAttempt,
            cell: (n) => <When at={n.next_attempt_at} zone={zone} lang={cabinet.lang} />,
          },
          { label: t.created, cell: (n) => <When at={n.created_at} zone={zone} lang={cabinet.lang} /> },
          { label: t.url, cellClass: 'copy url', cell: (n) => n.url },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/notifications" query={{ ...query }} next={p.next} />
    </CabinetPage>
  );
}

export function NotificationPage(p: {
  cabinet: CabinetContext;
  n: NotificationView;
  headers: Array<[string, string]>;
  done?: string | undefined;
  now: Date;
}) {
  const { cabinet, n } = p;
  const t = notificationTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const when = (at: string | null) => <When at={at} zone={zone} lang={cabinet.lang} />;
  const resource =
    n.resource_type === 'subscription' ? (
      <a href={`/cabinet/subscriptions/${encodeURIComponent(n.resource_id)}`}>{n.resource_id}</a>
    ) : (
      n.resource_id
    );
  const attempts = n.attempts ?? [];
  return (
    <CabinetPage cabinet={cabinet} title={fill(t.detailTitle, { id: n.id })} section="notifications">
      <p>
        <a href="/cabinet/notifications">← {t.back}</a>
      </p>
      {p.done === 'resent' && (
        <p class="notice" role="status">
          {n.status === 'pending' ? t.resent : t.onItsWay}
        </p>
      )}
      <Details
        rows={[
          [t.event, <EventName event={n.event} lang={cabinet.lang} />],
          [t.resource, resource],
          [t.url, <span class="copy">{n.url}</span>],
          [t.status, <StatusBadge status={n.status} lang={cabinet.lang} />],
          [t.attempts, String(n.attempt_count)],
          [t.nextAttempt, when(n.next_attempt_at)],
          [t.delivered, when(n.delivered_at)],
          [t.created, when(n.created_at)],
        ]}
      />
      <p class="muted">{fill(t.times, { zone: zoneLabel(zone, p.now) })}</p>
      <form method="post" action={`/cabinet/notifications/${n.id}/resend`} class="actions">
        <CsrfField token={cabinet.csrf} />
        <button type="submit" class="primary" aria-describedby="resend-hint">
          {t.resend}
        </button>
        <p class="hint" id="resend-hint">
          {t.resendHint}
        </p>
      </form>
      <h2>{t.attemptList}</h2>
      <ListTable
        empty={t.noAttempts}
        emptyClass="empty"
        rows={[...attempts].reverse()}
        columns={[
          { label: t.n, num: true, cell: (a) => a.n },
          { label: t.at, cell: (a) => when(a.at) },
          {
            label: t.code,
            cell: (a) =>
              a.status_code === null ? (
                <span class="badge failed">{t.noAnswer}</span>
              ) : (
                <span class={`badge ${a.status_code < 300 ? 'delivered' : 'failed'}`}>{a.status_code}</span>
              ),
          },
          { label: t.duration, num: true, cell: (a) => fill(t.ms, { n: a.duration_ms }) },
          {
            label: t.answer,
            cell: (a) => (a.response ? <Verbatim class="answer">{a.response}</Verbatim> : '—'),
          },
          { label: t.error, cell: (a) => (a.error ? <Code>{a.error}</Code> : '—') },
        ]}
      />
      <h2>{t.payload}</h2>
      <Verbatim>{JSON.stringify(n.payload, null, 2)}</Verbatim>
      <h2>{t.headers}</h2>
      <Verbatim class="headers">{p.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}</Verbatim>
      <p class="hint">
        {fillParts(t.headersHint, {
          contentSignature: <Code>Content-Signature</Code>,
          kopekSignature: <Code>Kopek-Signature</Code>,
          kopekTimestamp: <Code>Kopek-Timestamp</Code>,
        })}
      </p>
    </CabinetPage>
  );
}
