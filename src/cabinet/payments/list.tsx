import { DateTime } from 'luxon';
import { Field, Money } from '../../pages/components.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { FilterBar, ListTable } from '../list.js';
import { Pager } from '../paging.js';
import { cabinetTexts } from '../texts.js';
import { descriptionText } from '../words.js';
import {
  PAYMENT_STATUSES,
  PAYMENT_TYPES,
  type PaymentFilters,
  type PaymentListRow,
  type PaymentStatus,
  type PaymentType,
} from './repository.js';
import { paymentTexts } from './texts.js';
import { Badge, CardSummary, queryText, shortUid, When } from './view.js';

/** The payments list: filters (a GET form, so a filtered list is a link), the table, the pager. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export interface PaymentQuery {
  /** The query as given, for the form and the pager's links. */
  raw: Record<string, string | undefined>;
  filters: PaymentFilters;
  errors: Partial<Record<'uid' | 'from' | 'to', string>>;
}

/** Reads the filters; a malformed one is shown on its field and matches nothing rather than failing. */
export function paymentQuery(query: Record<string, unknown>, cabinet: CabinetContext): PaymentQuery {
  const t = paymentTexts(cabinet.lang);
  const raw = {
    status: queryText(query.status),
    type: queryText(query.type),
    uid: queryText(query.uid, 64),
    tracking_id: queryText(query.tracking_id),
    from: queryText(query.from, 10),
    to: queryText(query.to, 10),
    after: queryText(query.after, 20),
  };
  const errors: PaymentQuery['errors'] = {};
  const day = (v: string | undefined, key: 'from' | 'to') => {
    if (v === undefined) return undefined;
    const d = DATE.test(v) ? DateTime.fromISO(v, { zone: cabinet.shop.timeZone }) : undefined;
    if (!d?.isValid) {
      errors[key] = t.dateInvalid;
      return undefined;
    }
    return (key === 'to' ? d.plus({ days: 1 }) : d).startOf('day').toJSDate();
  };
  if (raw.uid !== undefined && !UUID.test(raw.uid)) errors.uid = t.uidInvalid;
  const filters: PaymentFilters = {
    status: (PAYMENT_STATUSES as readonly string[]).includes(raw.status ?? '')
      ? (raw.status as PaymentStatus)
      : undefined,
    type: (PAYMENT_TYPES as readonly string[]).includes(raw.type ?? '')
      ? (raw.type as PaymentType)
      : undefined,
    uid: errors.uid ? undefined : raw.uid?.toLowerCase(),
    trackingId: raw.tracking_id,
    from: day(raw.from, 'from'),
    to: day(raw.to, 'to'),
  };
  return { raw, filters, errors };
}

export function PaymentsPage({
  cabinet,
  q,
  rows,
  next,
}: {
  cabinet: CabinetContext;
  q: PaymentQuery;
  rows: PaymentListRow[];
  next: number | undefined;
}) {
  const t = paymentTexts(cabinet.lang);
  const c = cabinetTexts(cabinet.lang);
  const filtered = Object.entries(q.raw).some(([k, v]) => k !== 'after' && v !== undefined);
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="payments">
      <FilterBar action="/cabinet/payments" label={t.filters} active={filtered} lang={cabinet.lang}>
        <Field
          name="status"
          label={t.status}
          value={q.filters.status}
          options={[['', t.any], ...PAYMENT_STATUSES.map((s): [string, string] => [s, t[`st_${s}`]])]}
        />
        <Field
          name="type"
          label={t.type}
          value={q.filters.type}
          options={[['', t.any], ...PAYMENT_TYPES.map((s): [string, string] => [s, t[`ty_${s}`]])]}
        />
        <Field name="uid" label={t.uid} value={q.raw.uid} error={q.errors.uid} maxLength={64} />
        <Field name="tracking_id" label={t.trackingId} value={q.raw.tracking_id} maxLength={255} />
        <Field name="from" label={t.from} type="date" value={q.raw.from} error={q.errors.from} />
        <Field name="to" label={t.to} type="date" value={q.raw.to} error={q.errors.to} />
      </FilterBar>
      <ListTable
        caption={t.caption}
        empty={filtered ? t.none : c.empty}
        rows={rows}
        columns={[
          { label: t.created, cell: (r) => <When at={r.created_at} cabinet={cabinet} /> },
          {
            label: t.uid,
            cell: (r) => (
              <>
                <a href={`/cabinet/payments/${r.uid}`} class="copy" aria-label={`${t.uid} ${r.uid}`}>
                  {shortUid(r.uid)}
                </a>
                {r.test && <span class="badge test">{t.test}</span>}
              </>
            ),
          },
          { label: t.type, cell: (r) => t[`ty_${r.type as PaymentType}`] ?? r.type },
          {
            label: t.status,
            cell: (r) => <Badge state={r.status}>{t[`st_${r.status as PaymentStatus}`] ?? r.status}</Badge>,
          },
          {
            label: t.amount,
            num: true,
            cell: (r) => <Money amount={Number(r.amount)} currency={r.currency} lang={cabinet.lang} />,
          },
          { label: t.description, cell: (r) => descriptionText(r.description, cabinet.lang) },
          { label: t.card, cell: (r) => <CardSummary card={r.card} /> },
          { label: t.trackingId, cellClass: 'copy', cell: (r) => r.tracking_id },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/payments" query={q.raw} next={next} />
    </CabinetPage>
  );
}
