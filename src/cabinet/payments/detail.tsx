import type { ComponentChildren } from 'preact';
import type { TransactionAnswer } from '../../gateway/index.js';
import type { HistoryEntry, TransactionRow } from '../../ledger/index.js';
import { Details, Money } from '../../pages/components.js';
import { fill, type PageLang } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import {
  Code,
  descriptionText,
  EventName,
  fillParts,
  GatewayMessage,
  languageName,
  Verbatim,
} from '../words.js';
import type { Action } from './actions.js';
import type { PaymentEvent, PaymentStatus, PaymentType } from './repository.js';
import { paymentTexts } from './texts.js';
import { Badge, CardSummary, When } from './view.js';

/** A transaction's page: everything the API's transaction object says, its family and its actions. */

export interface PaymentDetail {
  transaction: TransactionAnswer;
  parent: TransactionRow | undefined;
  children: TransactionRow[];
  history: HistoryEntry[];
  events: PaymentEvent[];
  actions: Action[];
  refunded: number;
  left: number;
  /** The notice of a just finished action (Post/Redirect/Get). */
  done: { kind: string; message?: string | undefined } | undefined;
}

type T = ReturnType<typeof paymentTexts>;
const typeName = (t: T, type: string) => t[`ty_${type as PaymentType}`] ?? type;
const statusName = (t: T, status: string) => t[`st_${status as PaymentStatus}`] ?? status;
const dash = (v: unknown): ComponentChildren =>
  v === null || v === undefined || v === '' ? <span class="muted">—</span> : String(v);

function Notice({ t, done, lang }: { t: T; done: PaymentDetail['done']; lang: PageLang }) {
  if (!done) return null;
  let text: ComponentChildren;
  if (done.kind === 'repeat') text = t.done_repeat;
  else if (done.kind === 'failed')
    text = fillParts(t.done_failed, { message: <GatewayMessage message={done.message} lang={lang} /> });
  else if (done.kind === 'capture' || done.kind === 'void' || done.kind === 'refund')
    text = t[`done_${done.kind}`];
  else return null;
  return (
    <p class={done.kind === 'failed' ? 'notice failed' : 'notice'} role="status">
      {text}
    </p>
  );
}

function Family({ d, t, cabinet }: { d: PaymentDetail; t: T; cabinet: CabinetContext }) {
  const kids = d.children.filter((c) => c.type !== 'proof');
  const proofs = d.children.filter((c) => c.type === 'proof');
  return (
    <section aria-labelledby="family">
      <h2 id="family">{t.children}</h2>
      {kids.length === 0 ? (
        <p>{t.noChildren}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t.created}</th>
                <th scope="col">{t.type}</th>
                <th scope="col">{t.status}</th>
                <th scope="col" class="num">
                  {t.amount}
                </th>
                <th scope="col">{t.reason}</th>
              </tr>
            </thead>
            <tbody>
              {kids.map((c) => (
                <tr>
                  <td>
                    <When at={c.created_at} cabinet={cabinet} />
                  </td>
                  <td>
                    <a href={`/cabinet/payments/${c.uid}`}>{typeName(t, c.type)}</a>
                  </td>
                  <td>
                    <Badge state={c.status}>{statusName(t, c.status)}</Badge>
                  </td>
                  <td class="num">
                    <Money amount={Number(c.amount)} currency={c.currency} lang={cabinet.lang} />
                  </td>
                  <td>{dash((c.details as { reason?: string }).reason)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {proofs.length > 0 && (
        <ul>
          {proofs.map((p) => (
            <li>
              <a href={`/cabinet/proofs/${p.uid}`}>{p.uid}</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Actions({ d, t }: { d: PaymentDetail; t: T }) {
  if (d.actions.length === 0) return null;
  const uid = d.transaction.uid;
  return (
    <section aria-labelledby="actions" class="payment-actions">
      <h2 id="actions">{t.actions}</h2>
      <p class="action-links">
        {d.actions.map((a) => (
          <a class={a === 'capture' ? 'button primary' : 'button'} href={`/cabinet/payments/${uid}/${a}`}>
            {t[a]}
          </a>
        ))}
      </p>
    </section>
  );
}

function Verification({ tr, t, lang }: { tr: TransactionAnswer; t: T; lang: PageLang }) {
  const v = tr.three_d_secure_verification;
  return (
    <section aria-labelledby="three-ds">
      <h2 id="three-ds">{t.threeDs}</h2>
      {v ? (
        <Details
          rows={[
            [t.status, <Badge state={v.status}>{statusName(t, v.status)}</Badge>],
            [t.message, <GatewayMessage message={v.message} lang={lang} />],
            [t.enrolled, dash(v.ve_status)],
            [t.paStatus, dash(v.pa_status)],
            [t.eci, dash(v.eci)],
            ...(v.fail_reason
              ? [
                  [t.failReason, <GatewayMessage message={v.fail_reason} lang={lang} />] as [
                    string,
                    ComponentChildren,
                  ],
                ]
              : []),
          ]}
        />
      ) : (
        <p>{t.threeDsNone}</p>
      )}
      {tr.avs_cvc_verification && (
        <>
          <h3>{t.avsCvc}</h3>
          <Details
            rows={[
              [t.avs, tr.avs_cvc_verification.avs_verification.result_code],
              [t.cvc, tr.avs_cvc_verification.cvc_verification.result_code],
            ]}
          />
        </>
      )}
    </section>
  );
}

function Buyer({ tr, t }: { tr: TransactionAnswer; t: T }) {
  const c = tr.customer;
  const b = tr.billing_address;
  if (!c && !b) return null;
  const name = [b?.first_name, b?.last_name].filter(Boolean).join(' ');
  const address = [b?.address, b?.city, b?.state, b?.zip, b?.country].filter(Boolean).join(', ');
  return (
    <section aria-labelledby="buyer">
      <h2 id="buyer">{t.customer}</h2>
      <Details
        rows={[
          [t.email, dash(c?.email)],
          [t.ip, dash(c?.ip)],
          [t.name, dash(name)],
          [t.address, dash(address)],
          [t.phone, dash(b?.phone)],
        ]}
      />
    </section>
  );
}

function Notifications({ d, t, cabinet }: { d: PaymentDetail; t: T; cabinet: CabinetContext }) {
  return (
    <section aria-labelledby="notifications">
      <h2 id="notifications">{t.notifications}</h2>
      {d.events.length === 0 ? (
        <p>{t.noNotifications}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{t.created}</th>
                <th scope="col">{t.event}</th>
                <th scope="col">{t.delivery}</th>
                <th scope="col" class="num">
                  {t.attempts}
                </th>
              </tr>
            </thead>
            <tbody>
              {d.events.map((e) => (
                <tr>
                  <td>
                    <When at={e.created_at} cabinet={cabinet} />
                  </td>
                  <td>
                    <EventName event={e.event} lang={cabinet.lang} />
                  </td>
                  <td>
                    <Badge state={e.status}>{t[`ev_${e.status}`] ?? e.status}</Badge>
                    {e.url && <div class="copy muted">{e.url}</div>}
                  </td>
                  <td class="num">{e.attempts}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function PaymentPage({ cabinet, d }: { cabinet: CabinetContext; d: PaymentDetail }) {
  const t = paymentTexts(cabinet.lang);
  const tr = d.transaction;
  const section = tr[tr.type];
  const card = tr.credit_card;
  const title = fill(t.detailTitle, { type: typeName(t, tr.type), amount: '' }).trim();
  return (
    <CabinetPage cabinet={cabinet} title={title} section="payments">
      <p>
        <a href="/cabinet/payments">{t.allPayments}</a>
      </p>
      <Notice t={t} done={d.done} lang={cabinet.lang} />
      <p class="headline">
        <Money amount={tr.amount} currency={tr.currency} lang={cabinet.lang} />{' '}
        <Badge state={tr.status}>{statusName(t, tr.status)}</Badge>
        {tr.test && <span class="badge test">{t.test}</span>}
      </p>
      <Details
        rows={[
          [t.uid, <span class="copy">{tr.uid}</span>],
          [t.type, typeName(t, tr.type)],
          [t.message, <GatewayMessage message={tr.message} lang={cabinet.lang} />],
          [t.description, descriptionText(tr.description, cabinet.lang)],
          [t.trackingId, <span class="copy">{dash(tr.tracking_id)}</span>],
          [t.created, <When at={tr.created_at} cabinet={cabinet} />],
          [t.updated, <When at={tr.updated_at} cabinet={cabinet} />],
          [t.paid, <When at={tr.paid_at} cabinet={cabinet} />],
          [t.language, languageName(tr.language, cabinet.lang)],
          ...(tr.reason !== undefined ? [[t.reason, tr.reason] as [string, string]] : []),
          ...(d.parent
            ? [
                [
                  t.parent,
                  <a href={`/cabinet/payments/${d.parent.uid}`}>
                    {typeName(t, d.parent.type)}{' '}
                    <Money
                      amount={Number(d.parent.amount)}
                      currency={d.parent.currency}
                      lang={cabinet.lang}
                    />
                  </a>,
                ] as [string, ComponentChildren],
              ]
            : []),
          ...(tr.type === 'payment' || tr.type === 'capture'
            ? ([
                [t.refunded, <Money amount={d.refunded} currency={tr.currency} lang={cabinet.lang} />],
                [t.left, <Money amount={d.left} currency={tr.currency} lang={cabinet.lang} />],
              ] as Array<[string, ComponentChildren]>)
            : []),
        ]}
      />
      <Actions d={d} t={t} />
      <Family d={d} t={t} cabinet={cabinet} />
      <section aria-labelledby="history">
        <h2 id="history">{t.history}</h2>
        <ol class="timeline">
          {d.history.map((h) => (
            <li>
              <Badge state={h.status}>{statusName(t, h.status)}</Badge> <When at={h.at} cabinet={cabinet} />
              {h.message && (
                <div>
                  <GatewayMessage message={h.message} lang={cabinet.lang} />
                </div>
              )}
            </li>
          ))}
        </ol>
      </section>
      {card && (
        <section aria-labelledby="card">
          <h2 id="card">{t.cardTitle}</h2>
          <Details
            rows={[
              [t.card, <CardSummary card={card as unknown as Record<string, unknown>} />],
              [t.holder, dash(card.holder)],
              [t.expiry, `${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`],
              [t.issuer, dash([card.issuer_name, card.issuer_country].filter(Boolean).join(', '))],
              [t.token, <span class="copy">{card.token}</span>],
            ]}
          />
        </section>
      )}
      <Verification tr={tr} t={t} lang={cabinet.lang} />
      <Buyer tr={tr} t={t} />
      {section && (
        <section aria-labelledby="acquirer">
          <h2 id="acquirer">{t.acquirer}</h2>
          <Details
            rows={[
              [t.message, <GatewayMessage message={section.message} lang={cabinet.lang} />],
              [t.authCode, dash(section.auth_code)],
              [t.rrn, dash(section.rrn)],
              [t.refId, dash(section.ref_id)],
              [t.descriptor, section.billing_descriptor ? <Code>{section.billing_descriptor}</Code> : '—'],
            ]}
          />
        </section>
      )}
      {Object.keys(tr.additional_data).length > 0 && (
        <section aria-labelledby="additional">
          <h2 id="additional">{t.additional}</h2>
          <Verbatim>{JSON.stringify(tr.additional_data, null, 2)}</Verbatim>
        </section>
      )}
      <Notifications d={d} t={t} cabinet={cabinet} />
    </CabinetPage>
  );
}
