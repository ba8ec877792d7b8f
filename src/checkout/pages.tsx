import { DateTime } from 'luxon';
import type { ComponentChildren } from 'preact';
import { Details, ErrorSummary } from '../pages/components.js';
import { HostedPage } from '../pages/document.js';
import { fill, type PageLang } from '../pages/lang.js';
import { checkoutTexts } from './texts.js';

/**
 * What the checkout's pages share: the frame (test banner, title), the result page every outcome
 * ends on, and dates in the shop's zone. The forms themselves live beside their kind of checkout.
 */

/** A date in the shop's time zone, in the page's language. */
export function shopDate(d: Date, timeZone: string, lang: PageLang): string {
  return DateTime.fromJSDate(d, { zone: timeZone }).setLocale(lang).toLocaleString(DateTime.DATE_FULL);
}

export function CheckoutFrame(p: {
  lang: PageLang;
  title: string;
  test: boolean;
  scripts?: string[];
  children: ComponentChildren;
}) {
  return (
    <HostedPage lang={p.lang} title={p.title} scripts={p.scripts ?? []} test={p.test}>
      {p.children}
    </HostedPage>
  );
}

export interface ResultProps {
  lang: PageLang;
  test: boolean;
  title: string;
  tone: 'ok' | 'bad' | 'wait';
  lines?: string[];
  details?: Array<[string, ComponentChildren]>;
  receipt?: string[] | null;
  /** Where the buyer goes on: the shop's address with the outcome in its query. */
  continueUrl?: string | null;
  /** Goes on by itself after a few seconds (a script; the link stays for everyone). */
  autoContinue?: boolean;
  /** The page to load again while the outcome is not known. */
  refreshUrl?: string;
  /** The bank's 3-D Secure page to go to. */
  authUrl?: string;
}

/** Every end of a checkout: paid, declined, waiting for the bank, expired, no longer valid. */
export function ResultPage(p: ResultProps) {
  const t = checkoutTexts(p.lang);
  const auto = p.autoContinue && p.continueUrl;
  return (
    <CheckoutFrame lang={p.lang} title={p.title} test={p.test} scripts={auto ? ['checkout-continue.js'] : []}>
      <h1 class={p.tone === 'wait' ? undefined : p.tone}>{p.title}</h1>
      {(p.lines ?? []).map((line) => (
        <p>{line}</p>
      ))}
      {p.details && p.details.length > 0 && <Details rows={p.details} />}
      {p.receipt && p.receipt.length > 0 && <p class="receipt">{p.receipt.join('\n')}</p>}
      <div class="actions">
        {p.authUrl && (
          <a class="button primary" href={p.authUrl}>
            {t.authContinue}
          </a>
        )}
        {p.refreshUrl && (
          <a class="button" href={p.refreshUrl}>
            {t.refresh}
          </a>
        )}
        {p.continueUrl && (
          <a class="button primary" href={p.continueUrl} data-continue-after={auto ? '3' : undefined}>
            {t.continue}
          </a>
        )}
      </div>
      {auto && <p class="note">{t.continueSoon}</p>}
    </CheckoutFrame>
  );
}

/** The errors of a posted form, at its top. */
export function FormErrors({ lang, messages }: { lang: PageLang; messages: string[] }) {
  return <ErrorSummary title={checkoutTexts(lang).errorsTitle} errors={messages} />;
}

export { fill };
