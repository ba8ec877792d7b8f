import { ErrorSummary, Field, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import { SUBSCRIPTION_STATES } from '../../subscriptions/repository.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Pager } from '../paging.js';
import { cabinetTexts } from '../texts.js';
import { ShopTime, StateBadge } from './format.js';
import type { SubscriptionListRow } from './repository.js';
import { stateTexts, subscriptionTexts } from './texts.js';

/** The filters as the visitor typed them (kept in the form), and what is wrong with them. */
export interface ListQuery {
  state: string;
  plan: string;
  email: string;
  tracking_id: string;
  id: string;
  after: string;
}

export type ListErrors = Partial<Record<keyof ListQuery, string>>;

export interface ListView {
  cabinet: CabinetContext;
  query: ListQuery;
  errors: ListErrors;
  rows: SubscriptionListRow[];
  next: number | undefined;
}

function StateSelect({ view }: { view: ListView }) {
  const t = subscriptionTexts(view.cabinet.lang);
  const names = stateTexts(view.cabinet.lang) as Record<string, string>;
  const error = view.errors.state;
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for="f-state">{t.state}</label>
      <select
        id="f-state"
        name="state"
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? 'f-state-error' : undefined}
      >
        <option value="">{t.anyState}</option>
        {SUBSCRIPTION_STATES.map((s) => (
          <option value={s} selected={view.query.state === s}>
            {names[s]}
          </option>
        ))}
      </select>
      {error && (
        <p class="error" id="f-state-error">
          {error}
        </p>
      )}
    </div>
  );
}

function Filters({ view }: { view: ListView }) {
  const lang = view.cabinet.lang;
  const t = subscriptionTexts(lang);
  const c = cabinetTexts(lang);
  const q = view.query;
  return (
    <form method="get" action="/cabinet/subscriptions" class="filters" aria-label={t.filtersLabel}>
      <StateSelect view={view} />
      <Field name="plan" label={t.plan} value={q.plan} hint={t.planHint} error={view.errors.plan} />
      <Field
        name="email"
        label={t.email}
        type="email"
        autocomplete="off"
        value={q.email}
        error={view.errors.email}
      />
      <Field name="tracking_id" label={t.trackingId} value={q.tracking_id} error={view.errors.tracking_id} />
      <Field name="id" label={t.id} value={q.id} placeholder="sbs_…" error={view.errors.id} />
      <button type="submit" class="primary">
        {c.filter}
      </button>
      <a href="/cabinet/subscriptions">{c.reset}</a>
    </form>
  );
}

function Row({ row, view }: { row: SubscriptionListRow; view: ListView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  return (
    <tr>
      <td class="copy">
        <a href={`/cabinet/subscriptions/${encodeURIComponent(row.id)}`}>{row.id}</a>
      </td>
      <td>{row.email ?? <span class="muted">—</span>}</td>
      <td>{row.plan_title ?? <span class="muted">{row.plan_id}</span>}</td>
      <td class="num">
        {row.amount !== null && row.currency !== null ? (
          <Money amount={row.amount} currency={row.currency} />
        ) : (
          '—'
        )}
      </td>
      <td>
        <StateBadge state={row.state} lang={lang} />
      </td>
      <td>
        <ShopTime at={row.renew_at} zone={shop.timeZone} lang={lang} />
        {row.renew_at && row.number_failed_payment_attempts > 0 && (
          <span class="badge warn retry-mark">{t.retryAt}</span>
        )}
      </td>
      <td>
        <ShopTime at={row.created_at} zone={shop.timeZone} lang={lang} />
      </td>
    </tr>
  );
}

export function SubscriptionListPage({ view }: { view: ListView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  const errors = Object.values(view.errors).filter((e): e is string => e !== undefined);
  const filtered = ['state', 'plan', 'email', 'tracking_id', 'id'].some(
    (k) => view.query[k as keyof ListQuery] !== '',
  );
  return (
    <CabinetPage cabinet={view.cabinet} title={t.listTitle} section="subscriptions">
      <ErrorSummary title={t.filtersFailed} errors={errors} />
      <Filters view={view} />
      <p class="muted">{fill(t.zoneNote, { zone: shop.timeZone })}</p>
      {view.rows.length === 0 ? (
        <p class="empty">{filtered || view.query.after ? t.noMatch : t.noneYet}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{t.listTitle}</caption>
            <thead>
              <tr>
                <th scope="col">{t.id}</th>
                <th scope="col">{t.customer}</th>
                <th scope="col">{t.plan}</th>
                <th scope="col" class="num">
                  {t.amount}
                </th>
                <th scope="col">{t.state}</th>
                <th scope="col">{t.nextCharge}</th>
                <th scope="col">{t.created}</th>
              </tr>
            </thead>
            <tbody>
              {view.rows.map((row) => (
                <Row row={row} view={view} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager lang={lang} path="/cabinet/subscriptions" query={{ ...view.query }} next={view.next} />
    </CabinetPage>
  );
}
