import type { ComponentChildren } from 'preact';
import { cardText } from '../../pages/brand.js';
import { Details, Money } from '../../pages/components.js';
import { fill, type PageLang } from '../../pages/lang.js';
import type { Plan } from '../../plans/index.js';
import type { Subscription } from '../../subscriptions/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Code, EventName, GatewayMessage, NO_TRANSLATE } from '../words.js';
import {
  chargeStatusName,
  deliveryStatusName,
  everyText,
  periodText,
  ShopTime,
  StateBadge,
} from './format.js';
import { stateTexts, subscriptionTexts } from './texts.js';
import type { Timeline, TimelineItem } from './timeline.js';
import { TIMELINE_LIMIT } from './timeline.js';

export interface DetailView {
  cabinet: CabinetContext;
  sub: Subscription;
  timeline: Timeline;
  notice?: string | undefined;
}

const isPlan = (p: Subscription['plan']): p is Plan => 'title' in p;

function planText(plan: Plan, lang: PageLang): ComponentChildren {
  const t = subscriptionTexts(lang);
  return (
    <>
      {plan.title} · <Money amount={plan.plan.amount} currency={plan.currency} lang={lang} />{' '}
      {everyText(plan.plan.interval, plan.plan.interval_unit, lang)} ·{' '}
      {plan.infinite ? t.forever : fill(t.ofCycles, { n: plan.billing_cycles ?? 0 })}{' '}
      <span class="muted copy" {...NO_TRANSLATE}>
        {plan.id}
      </span>
    </>
  );
}

function detailRows(view: DetailView): Array<[string, ComponentChildren]> {
  const { sub, cabinet } = view;
  const { lang, shop } = cabinet;
  const t = subscriptionTexts(lang);
  const zone = shop.timeZone;
  const plan = sub.plan;
  const customer = 'email' in sub.customer ? sub.customer : undefined;
  const card = 'last_4' in sub.card ? sub.card : undefined;
  const rows: Array<[string, ComponentChildren]> = [
    [t.state, <StateBadge state={sub.state} lang={lang} />],
    [
      t.plan,
      isPlan(plan) ? (
        planText(plan, lang)
      ) : (
        <span class="copy" {...NO_TRANSLATE}>
          {plan.id}
        </span>
      ),
    ],
    [
      t.customer,
      customer ? (
        <>
          {customer.email}
          {(customer.first_name || customer.last_name) &&
            ` · ${[customer.first_name, customer.last_name].filter(Boolean).join(' ')}`}{' '}
          <span class="muted copy">{customer.id}</span>
        </>
      ) : (
        '—'
      ),
    ],
    [
      t.card,
      card
        ? `${cardText({ brand: card.brand, last_4: card.last_4 })}, ${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`
        : '—',
    ],
    [t.nextCharge, <ShopTime at={sub.renew_at} zone={zone} lang={lang} />],
    [t.activeTo, <ShopTime at={sub.active_to} zone={zone} lang={lang} />],
    [t.cycles, String(sub.paid_billing_cycles)],
    [t.failedAttempts, String(sub.number_failed_payment_attempts)],
    [
      t.trial,
      isPlan(plan) && plan.trial ? (
        <>
          {periodText(plan.trial.interval, plan.trial.interval_unit, lang)},{' '}
          <Money amount={plan.trial.amount} currency={plan.currency} lang={lang} />
        </>
      ) : (
        t.noTrial
      ),
    ],
    [t.trackingId, sub.tracking_id ?? '—'],
    [t.created, <ShopTime at={sub.created_at} zone={zone} lang={lang} />],
  ];
  if (sub.cancelled_at) {
    rows.push([t.canceledAt, <ShopTime at={sub.cancelled_at} zone={zone} lang={lang} />]);
    rows.push([t.cancelReason, <GatewayMessage message={sub.cancel_reason} lang={lang} />]);
  }
  return rows;
}

function ChargeItem({ item, view }: { item: Extract<TimelineItem, { kind: 'charge' }>; view: DetailView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  const c = item.charge;
  const plan = view.sub.plan;
  // A free trial's period 0 is no payment: the card's verification on a 3-D Secure shop.
  const verification = c.period === 0 && isPlan(plan) && plan.trial?.amount === 0;
  return (
    <li class="charge">
      <ShopTime at={item.at} zone={shop.timeZone} lang={lang} />{' '}
      <strong>
        {verification
          ? fill(t.verification, { attempt: c.attempt })
          : c.period === 0
            ? fill(t.trialCharge, { attempt: c.attempt })
            : fill(t.charge, { period: c.period, attempt: c.attempt })}
      </strong>{' '}
      <span class={`badge ${c.status}`}>{chargeStatusName(lang, c.status)}</span>{' '}
      <Money amount={c.amount} currency={c.currency} lang={lang} />
      {c.message && (
        <p>
          <GatewayMessage message={c.message} lang={lang} />
        </p>
      )}
      {c.three_ds_status && (
        <p class="muted">
          {t.threeDs}: <Code>{c.three_ds_status}</Code>
          {c.three_ds_message && (
            <>
              {' · '}
              <GatewayMessage message={c.three_ds_message} lang={lang} />
            </>
          )}
        </p>
      )}
      {c.transaction_uid && (
        <p class="muted">
          {t.transaction}:{' '}
          <a class="copy" href={`/cabinet/payments/${encodeURIComponent(c.transaction_uid)}`}>
            {c.transaction_uid}
          </a>
        </p>
      )}
    </li>
  );
}

function EventItem({ item, view }: { item: Extract<TimelineItem, { kind: 'event' }>; view: DetailView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  const names = stateTexts(lang) as Record<string, string>;
  const e = item.event;
  const zone = shop.timeZone;
  return (
    <li class="event">
      <ShopTime at={item.at} zone={zone} lang={lang} />{' '}
      <strong>
        <EventName event={e.event} lang={lang} />
      </strong>
      {e.state && <span class="muted"> · {fill(t.stateBecame, { state: names[e.state] ?? e.state })}</span>}
      <p>
        {t.notification}{' '}
        <a class="copy" href={`/cabinet/notifications/evt_${e.id}`}>
          evt_{e.id}
        </a>
        {e.status === 'none' ? (
          <span class="muted"> · {t.noDelivery}</span>
        ) : (
          <>
            {' '}
            <span class={`badge ${e.status}`}>{deliveryStatusName(lang, e.status)}</span>
            {e.status === 'pending' && e.next_attempt_at && (
              <span class="muted">
                {' '}
                · {t.nextAttempt} <ShopTime at={e.next_attempt_at} zone={zone} lang={lang} />
              </span>
            )}
          </>
        )}
      </p>
      {item.attempts.length > 0 && (
        <ul class="attempts">
          {item.attempts.map((a) => (
            <li>
              {fill(t.deliveryAttempt, { n: a.n })}: <ShopTime at={a.at} zone={zone} lang={lang} /> ·{' '}
              <span class={a.status_code !== null && a.status_code < 300 ? 'ok' : 'bad'}>
                {a.status_code ?? t.noAnswer}
              </span>{' '}
              · {fill(t.ms, { n: a.duration_ms })}
              {a.error && (
                <>
                  {' · '}
                  <Code>{a.error}</Code>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

export function SubscriptionPage({ view }: { view: DetailView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  const sub = view.sub;
  return (
    <CabinetPage cabinet={view.cabinet} title={sub.id} section="subscriptions">
      <p>
        <a href="/cabinet/subscriptions">← {t.back}</a>
      </p>
      {view.notice && (
        <p class="notice" role="status">
          {view.notice}
        </p>
      )}
      <h2>{t.details}</h2>
      <Details rows={detailRows(view)} />
      {!sub.cancelled_at && (
        <p>
          <a class="button danger" href={`/cabinet/subscriptions/${encodeURIComponent(sub.id)}/cancel`}>
            {t.cancel}
          </a>
        </p>
      )}
      <h2>{t.timeline}</h2>
      <p class="muted">
        {t.timelineNote} {fill(t.zoneNote, { zone: shop.timeZone })}
      </p>
      {view.timeline.cut && <p class="muted">{fill(t.timelineCut, { n: TIMELINE_LIMIT })}</p>}
      <ol class="timeline" reversed>
        {view.timeline.items.map((item) =>
          item.kind === 'charge' ? (
            <ChargeItem item={item} view={view} />
          ) : (
            <EventItem item={item} view={view} />
          ),
        )}
      </ol>
    </CabinetPage>
  );
}
