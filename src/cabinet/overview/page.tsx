import { moneyText } from '../../money/currencies.js';
import { Money } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import { SUBSCRIPTION_STATES } from '../../subscriptions/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { paymentTexts } from '../payments/texts.js';
import { ShopTime, StateBadge } from '../subscriptions/format.js';
import { stateTexts } from '../subscriptions/texts.js';
import { GatewayMessage } from '../words.js';
import { type ChartDay, RevenueChart } from './chart.js';
import { type FailedChargeRow, type RetryingRow, TROUBLE_CAP } from './repository.js';
import { overviewTexts } from './texts.js';

export interface CurrencyMonth {
  currency: string;
  days: ChartDay[];
  revenue: number;
  refunded: number;
  paid: number;
  failed: number;
}

export interface OverviewView {
  cabinet: CabinetContext;
  states: Map<string, number>;
  money: CurrencyMonth[];
  retrying: { rows: RetryingRow[]; count: number };
  failedCharges: FailedChargeRow[];
  notifications: { failed: number; retrying: number };
}

const capped = (n: number, plus: string) => (n >= TROUBLE_CAP ? fill(plus, { n: TROUBLE_CAP }) : String(n));

function States({ view }: { view: OverviewView }) {
  const { lang } = view.cabinet;
  const t = overviewTexts(lang);
  const names = stateTexts(lang) as Record<string, string>;
  const total = [...view.states.values()].reduce((a, b) => a + b, 0);
  return (
    <section aria-labelledby="by-state">
      <h2 id="by-state">{t.byState}</h2>
      <ul class="stats states">
        <li class="stat">
          <a href="/cabinet/subscriptions">
            <span class="value">{total}</span> <span class="label">{t.total}</span>
          </a>
        </li>
        {SUBSCRIPTION_STATES.filter((s) => (view.states.get(s) ?? 0) > 0).map((s) => (
          <li class={`stat state-${s}`}>
            <a href={`/cabinet/subscriptions?state=${s}`}>
              <span class="value">{view.states.get(s)}</span> <span class="label">{names[s]}</span>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Money30({ view }: { view: OverviewView }) {
  const { lang, shop } = view.cabinet;
  const t = overviewTexts(lang);
  return (
    <section aria-labelledby="money">
      <h2 id="money">{t.money}</h2>
      <p class="muted">{fill(t.moneyNote, { zone: shop.timeZone })}</p>
      {view.money.length === 0 && <p class="empty">{t.noMoney}</p>}
      {view.money.map((m) => (
        <div class="currency-month">
          <h3>{m.currency}</h3>
          <dl class="stats">
            <div class="stat">
              <dt class="label">{t.revenue}</dt>
              <dd class="value">
                <Money amount={m.revenue} currency={m.currency} lang={lang} />
              </dd>
            </div>
            <div class="stat">
              <dt class="label">{t.refunded}</dt>
              <dd class="value">
                <Money amount={m.refunded} currency={m.currency} lang={lang} />
              </dd>
            </div>
            <div class="stat">
              <dt class="label">{t.paid}</dt>
              <dd class="value">{m.paid}</dd>
            </div>
            <div class="stat">
              <dt class="label">{t.failed}</dt>
              <dd class="value">{m.failed}</dd>
            </div>
          </dl>
          <RevenueChart
            id={`chart-${m.currency}`}
            title={fill(t.chartTitle, {
              currency: m.currency,
              total: moneyText(m.revenue, m.currency, lang),
            })}
            currency={m.currency}
            days={m.days}
            labels={{ date: t.date, revenue: t.revenue, paid: t.paid, failed: t.failed, table: t.showTable }}
            lang={lang}
          />
        </div>
      ))}
    </section>
  );
}

function Attention({ view }: { view: OverviewView }) {
  const { lang, shop } = view.cabinet;
  const t = overviewTexts(lang);
  const statuses = paymentTexts(lang) as Record<string, string>;
  const statusName = (status: string) => statuses[`st_${status}`] ?? status;
  const zone = shop.timeZone;
  const { retrying, failedCharges, notifications } = view;
  const calm =
    retrying.count === 0 &&
    failedCharges.length === 0 &&
    notifications.failed === 0 &&
    notifications.retrying === 0;
  return (
    <section aria-labelledby="attention">
      <h2 id="attention">{t.attention}</h2>
      {calm && <p class="ok">{t.allGood}</p>}
      {retrying.count > 0 && (
        <>
          <h3>{t.retrying}</h3>
          {retrying.count > retrying.rows.length && (
            <p class="muted">
              {fill(t.retryingMore, { shown: retrying.rows.length, count: capped(retrying.count, t.plus) })}
            </p>
          )}
          <ul class="attention-list">
            {retrying.rows.map((r) => (
              <li>
                <a class="copy" href={`/cabinet/subscriptions/${encodeURIComponent(r.id)}`}>
                  {r.id}
                </a>{' '}
                <StateBadge state={r.state} lang={lang} /> ·{' '}
                {fill(t.failures, { n: r.number_failed_payment_attempts })} · {t.nextRetry}:{' '}
                <ShopTime at={r.renew_at} zone={zone} lang={lang} />
                {r.message && (
                  <span class="muted">
                    {' · '}
                    <GatewayMessage message={r.message} lang={lang} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {failedCharges.length > 0 && (
        <>
          <h3>{t.lastFailed}</h3>
          <ul class="attention-list">
            {failedCharges.map((c) => (
              <li>
                <ShopTime at={c.created_at} zone={zone} lang={lang} />{' '}
                <span class={`badge ${c.status}`}>{statusName(c.status)}</span>{' '}
                <Money amount={c.amount} currency={c.currency} lang={lang} />
                {c.message && (
                  <span>
                    {' · '}
                    <GatewayMessage message={c.message} lang={lang} />
                  </span>
                )}{' '}
                ·{' '}
                {c.subscription_id ? (
                  <a class="copy" href={`/cabinet/subscriptions/${encodeURIComponent(c.subscription_id)}`}>
                    {c.subscription_id}
                  </a>
                ) : (
                  <a class="copy" href={`/cabinet/payments/${encodeURIComponent(c.uid)}`}>
                    {c.uid}
                  </a>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {(notifications.failed > 0 || notifications.retrying > 0) && (
        <>
          <h3>{t.notifications}</h3>
          {notifications.failed > 0 && (
            <p class="bad">{fill(t.failedDeliveries, { n: capped(notifications.failed, t.plus) })}</p>
          )}
          {notifications.retrying > 0 && (
            <p>{fill(t.retryingDeliveries, { n: capped(notifications.retrying, t.plus) })}</p>
          )}
          <p>
            <a href="/cabinet/notifications?status=failed">{t.seeNotifications}</a>
          </p>
        </>
      )}
    </section>
  );
}

export function OverviewPage({ view }: { view: OverviewView }) {
  const t = overviewTexts(view.cabinet.lang);
  return (
    <CabinetPage cabinet={view.cabinet} title={t.title} section="overview">
      <Attention view={view} />
      <States view={view} />
      <Money30 view={view} />
    </CabinetPage>
  );
}
