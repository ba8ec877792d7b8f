import type { Customer } from '../../customers/service.js';
import { Details, Field, Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Pager } from '../paging.js';
import type { PaymentStatus, PaymentType } from '../payments/repository.js';
import { paymentTexts } from '../payments/texts.js';
import { Badge, shortUid, When } from '../payments/view.js';
import { cabinetTexts } from '../texts.js';
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
      <form method="get" action="/cabinet/customers" class="filters" aria-label={t.searchLabel}>
        <Field
          name="q"
          label={t.search}
          type="search"
          value={q}
          hint={t.searchHint}
          maxLength={254}
          size="wide"
        />
        <button type="submit">{c.filter}</button>
        {q && <a href="/cabinet/customers">{c.reset}</a>}
      </form>
      {rows.length === 0 ? (
        <p>{q ? t.none : c.empty}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">{t.caption}</caption>
            <thead>
              <tr>
                <th scope="col">{t.id}</th>
                <th scope="col">{t.email}</th>
                <th scope="col">{t.name}</th>
                <th scope="col">{t.created}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>
                    <a href={`/cabinet/customers/${r.id}`} class="copy">
                      {r.id}
                    </a>
                  </td>
                  <td>{r.email}</td>
                  <td>{fullName(r)}</td>
                  <td>
                    <When at={r.created_at} cabinet={cabinet} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
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
        {subscriptions.length === 0 ? (
          <p>{t.noSubscriptions}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t.id}</th>
                  <th scope="col">{t.plan}</th>
                  <th scope="col">{t.state}</th>
                  <th scope="col" class="num">
                    {t.amount}
                  </th>
                  <th scope="col">{t.created}</th>
                </tr>
              </thead>
              <tbody>
                {subscriptions.map((s) => (
                  <tr>
                    <td>
                      <a href={`/cabinet/subscriptions/${s.id}`} class="copy">
                        {s.id}
                      </a>
                    </td>
                    <td>{s.title}</td>
                    <td>
                      <Badge state={s.state}>{s.state.replace(/_/g, ' ')}</Badge>
                    </td>
                    <td class="num">
                      <Money amount={Number(s.amount)} currency={s.currency} />
                    </td>
                    <td>
                      <When at={s.created_at} cabinet={cabinet} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {subscriptions.length >= limit && <p class="muted">{fill(t.more, { n: limit })}</p>}
      </section>
      <section aria-labelledby="payments">
        <h2 id="payments">{t.payments}</h2>
        <p>{t.paymentsIntro}</p>
        {payments.length === 0 ? (
          <p>{t.noPayments}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{t.created}</th>
                  <th scope="col">{t.id}</th>
                  <th scope="col">{t.type}</th>
                  <th scope="col">{t.status}</th>
                  <th scope="col" class="num">
                    {t.amount}
                  </th>
                </tr>
              </thead>
              <tbody>
                {payments.map((r) => (
                  <tr>
                    <td>
                      <When at={r.created_at} cabinet={cabinet} />
                    </td>
                    <td>
                      <a href={`/cabinet/payments/${r.uid}`} class="copy">
                        {shortUid(r.uid)}
                      </a>
                    </td>
                    <td>{p[`ty_${r.type as PaymentType}`] ?? r.type}</td>
                    <td>
                      <Badge state={r.status}>{p[`st_${r.status as PaymentStatus}`] ?? r.status}</Badge>
                    </td>
                    <td class="num">
                      <Money amount={Number(r.amount)} currency={r.currency} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {payments.length >= limit && <p class="muted">{fill(t.more, { n: limit })}</p>}
      </section>
    </CabinetPage>
  );
}
