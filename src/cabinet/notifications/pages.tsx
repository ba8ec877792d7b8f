import type { NotificationView } from '../../notifications/service.js';
import { CsrfField, Details, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Pager } from '../paging.js';
import { Select, When, zoneLabel } from '../settings/controls.js';
import { cabinetTexts } from '../texts.js';
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

export function NotificationListPage(p: {
  cabinet: CabinetContext;
  query: ListQuery;
  rows: NotificationView[];
  next: number | undefined;
  statusError?: string | undefined;
  now: Date;
}) {
  const { cabinet, query } = p;
  const t = notificationTexts(cabinet.lang);
  const c = cabinetTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const filtered = query.status !== '' || query.event !== '' || query.resource_id !== '';
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="notifications">
      <p class="muted">{t.intro}</p>
      <form method="get" action="/cabinet/notifications" class="filters">
        <Select
          name="status"
          label={t.status}
          value={query.status}
          options={statusOptions(t)}
          error={p.statusError}
        />
        <Field name="event" label={t.event} value={query.event} hint={t.eventHint} maxLength={100} />
        <Field
          name="resource_id"
          label={t.resource}
          value={query.resource_id}
          hint={t.resourceHint}
          maxLength={100}
        />
        <button type="submit">{c.filter}</button>
        {filtered && <a href="/cabinet/notifications">{c.reset}</a>}
      </form>
      {p.rows.length === 0 ? (
        <p class="empty">{filtered ? t.none : t.noneAtAll}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="muted">{fill(t.times, { zone: zoneLabel(zone, p.now) })}</caption>
            <thead>
              <tr>
                <th scope="col">{t.id}</th>
                <th scope="col">{t.event}</th>
                <th scope="col">{t.resource}</th>
                <th scope="col">{t.status}</th>
                <th scope="col" class="num">
                  {t.attempts}
                </th>
                <th scope="col">{t.nextAttempt}</th>
                <th scope="col">{t.created}</th>
                <th scope="col">{t.url}</th>
              </tr>
            </thead>
            <tbody>
              {p.rows.map((n) => (
                <tr>
                  <td>
                    <a href={`/cabinet/notifications/${n.id}`}>{n.id}</a>
                  </td>
                  <td>{n.event}</td>
                  <td class="copy">
                    <a href={`/cabinet/notifications?resource_id=${encodeURIComponent(n.resource_id)}`}>
                      {n.resource_id}
                    </a>
                  </td>
                  <td>
                    <StatusBadge status={n.status} lang={cabinet.lang} />
                  </td>
                  <td class="num">{n.attempt_count}</td>
                  <td>
                    <When at={n.next_attempt_at} zone={zone} lang={cabinet.lang} />
                  </td>
                  <td>
                    <When at={n.created_at} zone={zone} lang={cabinet.lang} />
                  </td>
                  <td class="copy url">{n.url}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
          [t.event, n.event],
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
      {attempts.length === 0 ? (
        <p class="empty">{t.noAttempts}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col" class="num">
                  {t.n}
                </th>
                <th scope="col">{t.at}</th>
                <th scope="col">{t.code}</th>
                <th scope="col" class="num">
                  {t.duration}
                </th>
                <th scope="col">{t.answer}</th>
                <th scope="col">{t.error}</th>
              </tr>
            </thead>
            <tbody>
              {[...attempts].reverse().map((a) => (
                <tr>
                  <td class="num">{a.n}</td>
                  <td>{when(a.at)}</td>
                  <td>
                    {a.status_code === null ? (
                      <span class="badge failed">{t.noAnswer}</span>
                    ) : (
                      <span class={`badge ${a.status_code < 300 ? 'delivered' : 'failed'}`}>
                        {a.status_code}
                      </span>
                    )}
                  </td>
                  <td class="num">{fill(t.ms, { n: a.duration_ms })}</td>
                  <td>{a.response ? <pre class="answer">{a.response}</pre> : '—'}</td>
                  <td>{a.error ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>{t.payload}</h2>
      <pre>{JSON.stringify(n.payload, null, 2)}</pre>
      <h2>{t.headers}</h2>
      <pre class="headers">{p.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}</pre>
      <p class="hint">{t.headersHint}</p>
    </CabinetPage>
  );
}
