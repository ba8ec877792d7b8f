import { ErrorSummary, Field, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import { SUBSCRIPTION_STATES } from '../../subscriptions/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { type Column, FilterBar, ListTable } from '../list.js';
import { Pager } from '../paging.js';
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

function Filters({ view }: { view: ListView }) {
  const t = subscriptionTexts(view.cabinet.lang);
  const names = stateTexts(view.cabinet.lang) as Record<string, string>;
  const q = view.query;
  return (
    <FilterBar action="/cabinet/subscriptions" label={t.filtersLabel} active primary lang={view.cabinet.lang}>
      <Field
        name="state"
        label={t.state}
        value={q.state}
        options={[['', t.anyState], ...SUBSCRIPTION_STATES.map((s) => [s, names[s] ?? s] as const)]}
        error={view.errors.state}
      />
      <Field name="plan" label={t.plan} value={q.plan} hint={t.planHint} error={view.errors.plan} />
      <Field
        name="email"
        label={t.email}
        inputmode="email"
        autocomplete="off"
        value={q.email}
        hint={t.emailHint}
        error={view.errors.email}
      />
      <Field name="tracking_id" label={t.trackingId} value={q.tracking_id} error={view.errors.tracking_id} />
      <Field name="id" label={t.id} value={q.id} placeholder="sbs_3fK9…" error={view.errors.id} />
    </FilterBar>
  );
}

function columns(view: ListView): Array<Column<SubscriptionListRow>> {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  return [
    {
      label: t.id,
      cellClass: 'copy',
      cell: (row) => <a href={`/cabinet/subscriptions/${encodeURIComponent(row.id)}`}>{row.id}</a>,
    },
    { label: t.customer, cell: (row) => row.email ?? <span class="muted">—</span> },
    { label: t.plan, cell: (row) => row.plan_title ?? <span class="muted">{row.plan_id}</span> },
    {
      label: t.amount,
      num: true,
      cell: (row) =>
        row.amount !== null && row.currency !== null ? (
          <Money amount={row.amount} currency={row.currency} lang={lang} />
        ) : (
          '—'
        ),
    },
    { label: t.state, cell: (row) => <StateBadge state={row.state} lang={lang} /> },
    {
      label: t.nextCharge,
      cell: (row) => (
        <>
          <ShopTime at={row.renew_at} zone={shop.timeZone} lang={lang} />
          {row.renew_at && row.number_failed_payment_attempts > 0 && (
            <span class="badge warn retry-mark">{t.retryAt}</span>
          )}
        </>
      ),
    },
    { label: t.created, cell: (row) => <ShopTime at={row.created_at} zone={shop.timeZone} lang={lang} /> },
  ];
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
      <ListTable
        caption={t.listTitle}
        empty={filtered || view.query.after ? t.noMatch : t.noneYet}
        emptyClass="empty"
        rows={view.rows}
        columns={columns(view)}
      />
      <Pager lang={lang} path="/cabinet/subscriptions" query={{ ...view.query }} next={view.next} />
    </CabinetPage>
  );
}
