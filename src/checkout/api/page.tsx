import { CardFields, type CardFormValues } from '../../pages/card-form.js';
import { CsrfField, Details, Field, Money } from '../../pages/components.js';
import { fill, type PageLang, pageLang } from '../../pages/lang.js';
import { returnUrlWithResult, shopSiteOf } from '../../pages/return-url.js';
import { bankMessage } from '../bank-messages.js';
import { CUSTOMER_FIELDS, type CustomerField, type FormProblems } from '../form-errors.js';
import { CheckoutFrame, FormErrors, type FrameInfo, type ResultProps } from '../pages.js';
import { checkoutTexts } from '../texts.js';
import type { CtpCheckout } from './pay.js';
import type { CtpRow } from './repository.js';
import { isExpiredUnpaid } from './service.js';

export const ctpLang = (row: CtpRow): PageLang => pageLang(row.settings.language);

/**
 * The shop's address with the platform's query added (token, status, and the transaction's uid):
 * the shop's own parameters stay as written, ours follow with `&`, before any fragment.
 */
function withToken(url: string, row: CtpRow, status: string): string | null {
  const checked = returnUrlWithResult(url, 'x', status);
  if (!checked) return null;
  const tx = row.gateway_response?.transaction;
  const uid = typeof tx?.uid === 'string' ? tx.uid : null;
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const fragment = hash === -1 ? '' : url.slice(hash);
  const joiner = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  const query = [`token=${encodeURIComponent(row.token)}`, `status=${encodeURIComponent(status)}`];
  if (uid) query.push(`uid=${encodeURIComponent(uid)}`);
  return `${base}${joiner}${query.join('&')}${fragment}`;
}

export interface CtpFormProps {
  c: CtpCheckout;
  /** The buyer's choice of language, else the checkout's (ctpLang). */
  lang: PageLang;
  shopName: string;
  csrf: string;
  problems?: FormProblems;
  values?: CardFormValues & Record<string, string>;
  /** Shown in a frame on the shop's page: its mode goes with the form, links leave the frame. */
  frame?: FrameInfo | undefined;
}

export function CtpFormPage(p: CtpFormProps) {
  const { row } = p.c;
  const { lang } = p;
  const t = checkoutTexts(lang);
  const problems = p.problems ?? { fields: {}, messages: [] };
  const values = p.values ?? {};
  const tokenization = row.transaction_type === 'tokenization';
  const title = tokenization ? t.saveCardSubmit : t.payTitle;
  const { visible, read_only } = row.settings.customer_fields;
  const shown = (Object.keys(CUSTOMER_FIELDS) as CustomerField[]).filter((f) => visible.includes(f));
  const declined = (row.status === 'failed' || row.status === 'error') && row.finished_at === null;
  const left = row.attempts === null ? null : Math.max(row.attempts - row.failed_attempts, 0);
  const amount = <Money amount={row.order.amount} currency={row.order.currency} lang={lang} />;
  const rows: Array<[string, preact.ComponentChildren]> = [
    [t.shop, p.shopName],
    [t.description, row.order.description],
  ];
  if (!tokenization) rows.push([t.amount, amount]);
  if (row.order.tracking_id) rows.push([t.order, row.order.tracking_id]);
  return (
    <CheckoutFrame
      lang={lang}
      title={title}
      test={row.test}
      scripts={['card-form.js']}
      frame={p.frame}
      end={declined ? { status: row.status ?? 'failed' } : undefined}
    >
      <h1 class="form-title">{title}</h1>
      <Details rows={rows} />
      {declined && (
        <div class="error-summary" role="alert">
          <h2>{t.declinedTitle}</h2>
          <p>{fill(t.declinedText, { message: bankMessage(row.message, lang) })}</p>
          <p>{t.tryAgain}</p>
          {left !== null && <p>{fill(t.attemptsLeft, { n: left })}</p>}
        </div>
      )}
      <FormErrors lang={lang} messages={problems.messages} />
      <form method="post" action="/v2/checkout" novalidate>
        <CsrfField token={p.csrf} />
        <input type="hidden" name="token" value={row.token} />
        <input type="hidden" name="try" value={String(row.tries)} />
        {p.frame && <input type="hidden" name="iframe" value={p.frame.mode} />}
        {shown.length > 0 && (
          <fieldset>
            <legend>{t.customer}</legend>
            {shown.map((name) => {
              const f = CUSTOMER_FIELDS[name];
              const readOnly = read_only.includes(name);
              return (
                <Field
                  name={name}
                  label={t[f.label]}
                  type={f.type}
                  autocomplete={f.autocomplete}
                  required={!readOnly}
                  readOnly={readOnly}
                  value={
                    readOnly ? (row.customer?.[name] ?? '') : (values[name] ?? row.customer?.[name] ?? '')
                  }
                  error={problems.fields[name]}
                  maxLength={255}
                />
              );
            })}
          </fieldset>
        )}
        <CardFields lang={lang} values={values} errors={problems.fields} />
        <div class="actions">
          <button type="submit" class="primary">
            {tokenization ? (
              t.saveCardSubmit
            ) : (
              <>
                {fill(t.paySubmit, { amount: '' }).trim()} {amount}
              </>
            )}
          </button>
          {row.settings.cancel_url && (
            <a class="button" href={row.settings.cancel_url} target={p.frame ? '_top' : undefined}>
              {t.cancel}
            </a>
          )}
        </div>
      </form>
    </CheckoutFrame>
  );
}

/** Whether the page still takes a card: not finished, not expired, no bank step waiting. */
export function ctpOpen(row: CtpRow, now: Date): boolean {
  return row.finished_at === null && !isExpiredUnpaid(row, now) && row.status !== 'incomplete';
}

/** The page of a checkout that takes no card any more (or waits for the bank). */
export function ctpResult(
  c: CtpCheckout,
  selfUrl: string,
  lang: PageLang,
  frame?: FrameInfo | undefined,
): ResultProps {
  return { ...ctpOutcome(c, selfUrl, lang), frame };
}

function ctpOutcome(c: CtpCheckout, selfUrl: string, lang: PageLang): ResultProps {
  const { row } = c;
  const t = checkoutTexts(lang);
  const s = row.settings;
  const shopUrl = c.ctx.shop.returnUrl;
  const test = row.test;
  if (isExpiredUnpaid(row, c.ctx.clock.now())) {
    // Back to the shop: where it sends a payment that did not happen (with the token and status
    // error), else the home page of the shop's site, as far as any of its addresses tells it.
    const back = s.fail_url ?? s.cancel_url ?? s.decline_url ?? shopUrl;
    const continueUrl = (back && withToken(back, row, 'error')) ?? shopSiteOf([s.success_url]);
    return {
      lang,
      test,
      tone: 'bad',
      title: t.expiredTitle,
      lines: [continueUrl ? t.expiredText : fill(t.expiredTextNoLink, { shop: c.ctx.shop.name })],
      continueUrl,
      status: 'error',
    };
  }
  const tx = row.gateway_response?.transaction;
  if (row.status === 'incomplete') {
    const redirect = typeof tx?.redirect_url === 'string' ? tx.redirect_url : undefined;
    if (redirect)
      return { lang, test, tone: 'wait', title: t.authTitle, lines: [t.authText], authUrl: redirect };
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
  const money = <Money amount={row.order.amount} currency={row.order.currency} lang={lang} />;
  const details: Array<[string, preact.ComponentChildren]> = [[t.description, row.order.description]];
  if (row.transaction_type !== 'tokenization') details.push([t.amount, money]);
  if (typeof tx?.uid === 'string') details.push([t.transaction, tx.uid]);
  if (row.status === 'successful') {
    const back = s.success_url ?? shopUrl;
    const title =
      row.transaction_type === 'tokenization'
        ? t.cardSavedTitle
        : row.transaction_type === 'authorization'
          ? t.authorizedTitle
          : t.paymentDoneTitle;
    return {
      lang,
      test,
      tone: 'ok',
      title,
      details,
      continueUrl: back && withToken(back, row, 'successful'),
      autoContinue: true,
      status: 'successful',
    };
  }
  const status = row.status ?? 'failed';
  const back = (status === 'error' ? s.fail_url : s.decline_url) ?? s.fail_url ?? s.decline_url ?? shopUrl;
  return {
    lang,
    test,
    tone: 'bad',
    title: t.declinedTitle,
    lines: [fill(t.declinedText, { message: bankMessage(row.message, lang) })],
    details,
    continueUrl: back && withToken(back, row, status),
    autoContinue: true,
    status,
  };
}
