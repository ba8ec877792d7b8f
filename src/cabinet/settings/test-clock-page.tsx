import { CsrfField, ErrorSummary, Field } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { StateBadge } from '../subscriptions/format.js';
import { EventName } from '../words.js';
import { When, zonedText, zoneLabel } from './controls.js';
import { settingsTexts } from './texts.js';

export interface ClockEvent {
  id: number;
  event: string;
  resource_id: string;
  payload: Record<string, unknown>;
  created_at: Date;
}

export interface AdvanceForm {
  amount: string;
  unit: string;
  to: string;
}

export interface AdvanceResult {
  from: string;
  to: string;
  counts: Record<string, string>;
}

export const UNITS = ['hours', 'days', 'months', 'years'] as const;

function aheadText(offsetSeconds: number, t: ReturnType<typeof settingsTexts>): string {
  const hours = Math.floor(offsetSeconds / 3600);
  const days = Math.floor(hours / 24);
  const parts = [];
  if (days > 0) parts.push(fill(t.days_n, { n: days }));
  parts.push(fill(t.hours_n, { n: hours % 24 }));
  return parts.join(' ');
}

export function TestClockPage(p: {
  cabinet: CabinetContext;
  now: Date;
  offsetSeconds: number;
  form: AdvanceForm;
  errors: Partial<Record<'amount' | 'to' | 'base', string>>;
  result: AdvanceResult | undefined;
  events: ClockEvent[];
  /** The shop has just started over. */
  reset?: boolean;
}) {
  const { cabinet, result } = p;
  const t = settingsTexts(cabinet.lang);
  const zone = cabinet.shop.timeZone;
  const messages = Object.values(p.errors).filter((m): m is string => typeof m === 'string');
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '—');
  return (
    <CabinetPage cabinet={cabinet} title={t.testClock} section="settings">
      <p class="muted">{t.testClockIntro}</p>
      {result && (
        <div class="notice" role="status">
          <p>
            {fill(t.advanced, {
              from: zonedText(result.from, zone, cabinet.lang),
              to: zonedText(result.to, zone, cabinet.lang),
            })}
          </p>
          <p>{fill(t.ran, result.counts)}</p>
        </div>
      )}
      {p.reset && (
        <p class="notice" role="status">
          {t.startedOver}
        </p>
      )}
      <ErrorSummary title={t.advance} errors={messages} />
      <div class="stats">
        <div class="stat">
          <div class="value">
            <When at={p.now} zone={zone} lang={cabinet.lang} />
          </div>
          <div class="label">
            {t.now} · {zoneLabel(zone, p.now)}
          </div>
        </div>
        <div class="stat">
          <div class="value">{aheadText(p.offsetSeconds, t)}</div>
          <div class="label">{t.ahead}</div>
        </div>
      </div>
      <h2>{t.advance}</h2>
      <form method="post" action="/cabinet/test-clock" class="filters">
        <CsrfField token={cabinet.csrf} />
        <Field
          name="amount"
          label={t.by}
          type="number"
          inputmode="numeric"
          value={p.form.amount}
          size="short"
          error={p.errors.amount}
        />
        <Field
          name="unit"
          label={t.unit}
          value={p.form.unit}
          options={UNITS.map((u) => [u, t[u]] as const)}
        />
        <Field name="to" label={t.to} type="date" value={p.form.to} hint={t.toHint} error={p.errors.to} />
        <button type="submit" class="primary">
          {t.advanceButton}
        </button>
      </form>
      {result && (
        <section aria-labelledby="happened">
          <h2 id="happened">{fill(t.happened, { from: zonedText(result.from, zone, cabinet.lang) })}</h2>
          {p.events.length === 0 ? (
            <p class="empty">{t.nothingHappened}</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="muted">{fill(t.times, { zone: zoneLabel(zone, p.now) })}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t.when}</th>
                    <th scope="col">{t.event}</th>
                    <th scope="col">{t.subscription}</th>
                    <th scope="col">{t.state}</th>
                    <th scope="col" class="num">
                      {t.cycles}
                    </th>
                    <th scope="col">{t.renewAt}</th>
                  </tr>
                </thead>
                <tbody>
                  {p.events.map((e) => (
                    <tr class="clock-event">
                      <td>
                        <When at={e.created_at} zone={zone} lang={cabinet.lang} />
                      </td>
                      <td>
                        <EventName event={e.event} lang={cabinet.lang} />
                      </td>
                      <td class="copy">
                        <a href={`/cabinet/subscriptions/${encodeURIComponent(e.resource_id)}`}>
                          {e.resource_id}
                        </a>
                      </td>
                      <td>
                        {typeof e.payload.state === 'string' ? (
                          <StateBadge state={e.payload.state} lang={cabinet.lang} />
                        ) : (
                          '—'
                        )}
                      </td>
                      <td class="num">{text(e.payload.paid_billing_cycles)}</td>
                      <td>
                        {typeof e.payload.renew_at === 'string' ? (
                          <When at={e.payload.renew_at} zone={zone} lang={cabinet.lang} />
                        ) : (
                          '—'
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <p>
            <a href="/cabinet/subscriptions">{t.allSubscriptions}</a>
          </p>
        </section>
      )}
      <section aria-labelledby="start-over">
        <h2 id="start-over">{t.startOver}</h2>
        <p>{t.startOverText}</p>
        <form method="post" action="/cabinet/test-clock/reset">
          <CsrfField token={cabinet.csrf} />
          <button type="submit" class="danger">
            {t.startOverButton}
          </button>
        </form>
      </section>
    </CabinetPage>
  );
}
