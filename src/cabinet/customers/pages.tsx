import type { Customer } from '../../customers/index.js';
import { Details, Field, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { FilterBar, ListTable } from '../list.js';
import { Pager } from '../paging.js';
import type { PaymentStatus, PaymentType } from '../payments/repository.js';
import { paymentTexts } from '../payments/texts.js';
import { Badge, shortUid, When } from '../payments/view.js';
import { StateBadge } from '../subscriptions/format.js';
import { cabinetTexts } from '../texts.js';
import { Code, fillParts } from '../words.js';
import type { CustomerPayment, CustomerSubscription } from './repository.js';
import { customerTexts } from './texts.js';

/** The customers list with its search, and a customer's page with subscriptions and payments. */

const fullName = (c: { first_name: string | null; last_name: string | null }) =>
  [c.first_name, c.last_name].filter(Boolean).join(' ');

export interface CustomerListRow {
  id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  created_at: Date;
}

export function CustomersPage({
  cabinet,
  rows,
  next,
  q,
}: {
  cabinet: CabinetContext;
  rows: CustomerListRow[];
  next: number | undefined;
  q: string | undefined;
}) {
  const t = customerTexts(cabinet.lang);
  const c = cabinetTexts(cabinet.lang);
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="customers">
      <FilterBar action="/cabinet/customers" label={t.searchLabel} active={Boolean(q)} lang={cabinet.lang}>
        <Field
          name="q"
          label={t.search}
          type="search"
          value={q}
          hint={fillParts(t.searchHint, { prefix: <Code>cst_</Code> })}
          maxLength={254}
          size="wide"
        />
      </FilterBar>
      <ListTable
        caption={t.caption}
        empty={q ? t.none : c.empty}
        rows={rows}
        columns={[
          {
            label: t.id,
            cell: (r) => (
              <a href={`/cabinet/customers/${r.id}`} class="copy">
                {r.id}
              </a>
            ),
          },
          { label: t.email, cell: (r) => r.email },
          { label: t.name, cell: (r) => fullName(r) },
          { label: t.created, cell: (r) => <When at={r.created_at} cabinet={cabinet} /> },
        ]}
      />
      <Pager lang={cabinet.lang} path="/cabinet/customers" query={{ q }} next={next} />
    </CabinetPage>
  );
}

export function CustomerPage({
  cabinet,
  customer,
  createdAt,
  subscriptions,
  payments,
  limit,
}: {
  cabinet: CabinetContext;
  customer: Customer;
  createdAt: Date;
  subscriptions: CustomerSubscription[];
  payments: CustomerPayment[];
  limit: number;
}) {
  const t = customerTexts(cabinet.lang);
  const p = paymentTexts(cabinet.lang);
  const address = [customer.address, customer.city, customer.state, customer.zip, customer.country]
    .filter(Boolean)
    .join(', ');
  const dash = (v: string | null) => v || '—';
  return (
    <CabinetPage cabinet={cabinet} title={fullName(customer) || customer.email} section="customers">
      <p>
        <a href="/cabinet/customers">{t.allCustomers}</a>
      </p>
      <section aria-labelledby="contact">
        <h2 id="contact">{t.contact}</h2>
        <Details
          rows={[
            [t.id, <span class="copy">{customer.id}</span>],
            [t.email, customer.email],
            [t.name, dash(fullName(customer))],
            [t.phone, dash(customer.phone)],
            [t.address, dash(address)],
            [t.ip, customer.ip],
            [t.created, <When at={createdAt} cabinet={cabinet} />],
          ]}
        />
      </section>
      <section aria-labelledby="subscriptions">
        <h2 id="subscriptions">{t.subscriptions}</h2>
        <ListTable
          empty={t.noSubscriptions}
          rows={subscriptions}
          columns={[
            {
              label: t.id,
              cell: (s) => (
                <a href={`/cabinet/subscriptions/${s.id}`} class="copy">
                  {s.id}
                </a>
              ),
            },
            { label: t.plan, cell: (s) => s.title },
            { label: t.state, cell: (s) => <StateBadge state={s.state} lang={cabinet.lang} /> },
            {
              label: t.amount,
              num: true,
              cell: (s) => <Money amount={Number(s.amount)} currency={s.currency} lang={cabinet.lang} />,
            },
            { label: t.created, cell: (s) => <When at={s.created_at} cabinet={cabinet} /> },
          ]}
        />
        {subscriptions.length >= limit && <p class="muted">{fill(t.more, { n: limit })}</p>}
      </section>
      <section aria-labelledby="payments">
        <h2 id="payments">{t.payments}</h2>
        <p>{t.paymentsIntro}</p>
        <ListTable
          empty={t.noPayments}
          rows={payments}
          columns={[
            { label: t.created, cell: (r) => <When at={r.created_at} cabinet={cabinet} /> },
            {
              label: t.id,
              cell: (r) => (
                <a href={`/cabinet/payments/${r.uid}`} class="copy">
                  {shortUid(r.uid)}
                </a>
              ),
            },
            { label: t.type, cell: (r) => p[`ty_${r.type as PaymentType}`] ?? r.type },
            {
              label: t.status,
              cell: (r) => <Badge state={r.status}>{p[`st_${r.status as PaymentStatus}`] ?? r.status}</Badge>,
            },
            {
              label: t.amount,
              num: true,
              cell: (r) => <Money amount={Number(r.amount)} currency={r.currency} lang={cabinet.lang} />,
            },
          ]}
        />
        {payments.length >= limit && <p class="muted">{fill(t.more, { n: limit })}</p>}
      </section>
    </CabinetPage>
  );
}
