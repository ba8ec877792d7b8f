import { CsrfField, ErrorSummary } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { Subscription } from '../../subscriptions/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Code, fillParts } from '../words.js';
import { formatShopTime } from './format.js';
import { subscriptionTexts } from './texts.js';

export interface CancelView {
  cabinet: CabinetContext;
  sub: Subscription;
  reason: string;
  error?: string | undefined;
}

/**
 * The confirmation step of cancelling: what will happen, the reason the API would store, and one
 * button that does it. A subscription already ended never gets here (the handler sends it back).
 */
export function CancelPage({ view }: { view: CancelView }) {
  const { lang, shop } = view.cabinet;
  const t = subscriptionTexts(lang);
  const sub = view.sub;
  const href = `/cabinet/subscriptions/${encodeURIComponent(sub.id)}`;
  return (
    <CabinetPage cabinet={view.cabinet} title={fill(t.cancelTitle, { id: sub.id })} section="subscriptions">
      <ErrorSummary title={t.cancel} errors={view.error ? [view.error] : []} />
      <p>{fillParts(t.cancelWhat, { event: <Code>canceled.subscription</Code> })}</p>
      {sub.active_to && (
        <p>{fill(t.cancelPaidUntil, { date: formatShopTime(sub.active_to, shop.timeZone, lang) })}</p>
      )}
      <form method="post" action={`${href}/cancel`}>
        <CsrfField token={view.cabinet.csrf} />
        <div class={`field${view.error ? ' invalid' : ''}`}>
          <label for="f-cancel_reason">{t.reason}</label>
          <textarea
            id="f-cancel_reason"
            name="cancel_reason"
            required
            maxLength={1024}
            rows={3}
            aria-invalid={view.error ? 'true' : undefined}
            aria-describedby={`f-cancel_reason-hint${view.error ? ' f-cancel_reason-error' : ''}`}
          >
            {view.reason}
          </textarea>
          <p class="hint" id="f-cancel_reason-hint">
            {fillParts(t.reasonHint, { field: <Code>cancel_reason</Code> })}
          </p>
          {view.error && (
            <p class="error" id="f-cancel_reason-error">
              {view.error}
            </p>
          )}
        </div>
        <p class="cancel-actions">
          <button type="submit" class="danger">
            {t.confirmCancel}
          </button>{' '}
          <a href={href}>{t.keep}</a>
        </p>
      </form>
    </CabinetPage>
  );
}
