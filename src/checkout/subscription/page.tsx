import { returnUrlWithId } from '../../charging/index.js';
import { cardText } from '../../pages/brand.js';
import { CardFields, type CardFormValues } from '../../pages/card-form.js';
import { CsrfField, Details, Field, Money } from '../../pages/components.js';
import { fill, type PageLang } from '../../pages/lang.js';
import type { Plan } from '../../plans/index.js';
import { firstSchedule, type SubscriptionCheckout, type SubscriptionRow } from '../../subscriptions/index.js';
import { bankMessage } from '../bank-messages.js';
import { CUSTOMER_FIELDS, type FormProblems } from '../form-errors.js';
import { CheckoutFrame, FormErrors, type FrameInfo, type ResultProps, shopDate } from '../pages.js';
import { checkoutTexts, periodText } from '../texts.js';

/** The page's language: the subscription's page settings, else its own language (others: English). */
export function subscriptionLang(sub: SubscriptionRow): PageLang {
  const fromSettings = sub.settings?.language;
  return fromSettings === 'ru' || (typeof fromSettings !== 'string' && sub.language === 'ru') ? 'ru' : 'en';
}

const SHOWN_CUSTOMER = ['email', 'first_name', 'last_name'] as const;

export interface SubscriptionFormProps {
  sc: SubscriptionCheckout;
  shopName: string;
  lang: PageLang;
  csrf: string;
  problems?: FormProblems;
  values?: CardFormValues & Record<string, string>;
  /** Shown in a frame on the shop's page: its mode goes with the form. */
  frame?: FrameInfo | undefined;
}

/** What the plan costs and when, as the buyer is about to agree to it. */
function planRows(
  plan: Plan,
  now: Date,
  timeZone: string,
  lang: PageLang,
): Array<[string, preact.ComponentChildren]> {
  const t = checkoutTexts(lang);
  const money = (amount: number) => <Money amount={amount} currency={plan.currency} lang={lang} />;
  const every = fill(t.every, {
    amount: '\u0000',
    period: periodText(t, plan.plan.interval, plan.plan.interval_unit, lang),
  });
  const [before, after] = every.split('\u0000') as [string, string];
  const rows: Array<[string, preact.ComponentChildren]> = [
    [t.plan, plan.title],
    [
      t.price,
      <>
        {before}
        {money(plan.plan.amount)}
        {after}
      </>,
    ],
  ];
  const schedule = firstSchedule(plan, now, timeZone);
  if (plan.trial) {
    const period = periodText(t, plan.trial.interval, plan.trial.interval_unit, lang);
    if (plan.trial.amount > 0) {
      const [b, a] = fill(t.trialPaid, { amount: '\u0000', period }).split('\u0000') as [string, string];
      rows.push([
        t.trial,
        <>
          {b}
          {money(plan.trial.amount)}
          {a}
        </>,
      ]);
    } else rows.push([t.trial, fill(t.trialFree, { period })]);
  }
  rows.push([t.dueNow, money(schedule.charge?.amount ?? 0)]);
  const next = plan.trial ? schedule.renewAt : null;
  if (next) {
    const [b, a] = fill(t.nextChargeValue, { amount: '\u0000', date: shopDate(next, timeZone, lang) }).split(
      '\u0000',
    ) as [string, string];
    rows.push([
      t.nextCharge,
      <>
        {b}
        {money(plan.plan.amount)}
        {a}
      </>,
    ]);
  }
  return rows;
}

export function SubscriptionFormPage(p: SubscriptionFormProps) {
  const { sc, lang } = p;
  const t = checkoutTexts(lang);
  const title = fill(t.subscribeTitle, { title: sc.plan.title });
  const needsCustomer = sc.sub.customer_id === null;
  const problems = p.problems ?? { fields: {}, messages: [] };
  const values = p.values ?? {};
  return (
    <CheckoutFrame
      lang={lang}
      title={title}
      test={sc.ctx.shop.test || sc.plan.test === true}
      scripts={['card-form.js']}
      frame={p.frame}
    >
      <h1 class="form-title">{title}</h1>
      <Details
        rows={[[t.shop, p.shopName], ...planRows(sc.plan, sc.ctx.clock.now(), sc.sub.time_zone, lang)]}
      />
      <FormErrors lang={lang} messages={problems.messages} />
      <form method="post" action="/v2/checkout" novalidate>
        <CsrfField token={p.csrf} />
        <input type="hidden" name="token" value={sc.checkout.token} />
        {p.frame && <input type="hidden" name="iframe" value={p.frame.mode} />}
        {needsCustomer && (
          <fieldset>
            <legend>{t.customer}</legend>
            {SHOWN_CUSTOMER.map((name) => {
              const f = CUSTOMER_FIELDS[name];
              return (
                <Field
                  name={name}
                  label={t[f.label]}
                  type={f.type}
                  autocomplete={f.autocomplete}
                  required={name === 'email'}
                  value={values[name]}
                  error={problems.fields[name]}
                  maxLength={name === 'email' ? 254 : 255}
                />
              );
            })}
          </fieldset>
        )}
        <CardFields lang={lang} values={values} errors={problems.fields} />
        <div class="actions">
          <button type="submit" class="primary">
            {t.subscribeSubmit}
          </button>
        </div>
      </form>
    </CheckoutFrame>
  );
}

/** Where the buyer goes back to: the subscription's return_url (or the shop's URL) with `id`. */
export function subscriptionReturnUrl(sc: SubscriptionCheckout): string | null {
  const url = sc.sub.return_url ?? sc.ctx.shop.returnUrl;
  return url ? returnUrlWithId(url, sc.sub.id) : null;
}

/** The page of a checkout that can no longer be paid: paid, declined, waiting for the bank, expired. */
export function subscriptionResult(sc: SubscriptionCheckout, lang: PageLang, selfUrl: string): ResultProps {
  const t = checkoutTexts(lang);
  const { sub, plan } = sc;
  const test = sc.ctx.shop.test || plan.test === true;
  const back = subscriptionReturnUrl(sc);
  const tz = sc.ctx.shop.timeZone;
  if (sc.expired) {
    const line = back ? t.expiredText : fill(t.expiredTextNoLink, { shop: sc.ctx.shop.name });
    return {
      lang,
      test,
      tone: 'bad',
      title: t.expiredTitle,
      lines: [line],
      continueUrl: back,
      status: 'error',
    };
  }
  if (!sub.card_token)
    return { lang, test, tone: 'bad', title: t.closedTitle, lines: [t.closedText], continueUrl: back };
  const cardRow: [string, string] | undefined = sub.card ? [t.card, cardText(sub.card)] : undefined;
  const last = sub.last_transaction;
  if (sub.state === 'trial' || sub.state === 'active') {
    const until = sub.active_to ? shopDate(sub.active_to, tz, lang) : null;
    const details: Array<[string, preact.ComponentChildren]> = [[t.plan, plan.title]];
    if (cardRow) details.push(cardRow);
    if (until) details.push([sub.state === 'trial' ? t.trialUntil : t.activeUntil, until]);
    if (sub.renew_at)
      details.push([
        t.nextCharge,
        <>
          <Money amount={plan.plan.amount} currency={plan.currency} lang={lang} />
          {` — ${shopDate(sub.renew_at, tz, lang)}`}
        </>,
      ]);
    return {
      lang,
      test,
      tone: 'ok',
      title: sub.state === 'trial' ? t.trialTitle : t.paidTitle,
      details,
      receipt: sub.receipt_text,
      continueUrl: back,
      autoContinue: true,
      status: 'successful',
    };
  }
  if (sub.state === 'redirecting' && last?.redirect_url) {
    return { lang, test, tone: 'wait', title: t.authTitle, lines: [t.authText], authUrl: last.redirect_url };
  }
  if (sub.state === 'processing' || sub.state === 'trial_processing' || sub.state === 'redirecting') {
    return {
      lang,
      test,
      tone: 'wait',
      title: t.pendingTitle,
      lines: [t.pendingText],
      refreshUrl: selfUrl,
      status: 'pending',
    };
  }
  if (sub.state === 'canceled') {
    // Cancelled by the shop (a failed charge ends in `failed` or `error`): never "declined", and a
    // payment that went through after the cancel is said to be refunded (charging: recordAttempt).
    if (sub.paid_billing_cycles > 0) {
      const until = sub.active_to ? shopDate(sub.active_to, tz, lang) : null;
      return {
        lang,
        test,
        tone: 'bad',
        title: t.subscriptionCancelledTitle,
        lines: [t.subscriptionCancelledText],
        details: [
          [t.plan, plan.title],
          ...(cardRow ? [cardRow] : []),
          ...(until ? [[t.activeUntil, until] as [string, string]] : []),
        ],
        continueUrl: back,
      };
    }
    const refunded = last?.status === 'successful';
    return {
      lang,
      test,
      tone: 'bad',
      title: t.cancelledTitle,
      lines: refunded ? [t.cancelledText, t.cancelledRefundedText] : [t.cancelledText],
      ...(cardRow ? { details: [cardRow] } : {}),
      continueUrl: back,
    };
  }
  const message = last?.message ?? sub.cancel_reason ?? '';
  return {
    lang,
    test,
    tone: 'bad',
    title: t.declinedTitle,
    lines: [fill(t.declinedText, { message: bankMessage(message, lang) }), t.subscriptionFailedText],
    ...(cardRow ? { details: [cardRow] } : {}),
    continueUrl: back,
    status: 'failed',
  };
}
