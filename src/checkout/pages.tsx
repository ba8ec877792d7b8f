import { DateTime } from 'luxon';
import type { ComponentChildren } from 'preact';
import { Details, ErrorSummary } from '../pages/components.js';
import { HostedPage } from '../pages/document.js';
import type { FrameMode } from '../pages/frame-mode.js';
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

/** A page shown in a frame on the shop's page (docs/embedding.md). */
export interface FrameInfo {
  mode: FrameMode;
  /** The shop's origins allowed to frame it: its messages go to them only; null: any site. */
  origins: readonly string[] | null;
}

/**
 * What a framed page tells the shop's window (frame.js): how the payment stands (the widget's
 * statuses: successful, failed, error, pending) and, at its end, where the shop's window goes.
 */
export interface FrameEnd {
  status?: string | undefined;
  url?: string | null | undefined;
}

export function CheckoutFrame(p: {
  lang: PageLang;
  title: string;
  test: boolean;
  scripts?: string[];
  frame?: FrameInfo | undefined;
  end?: FrameEnd | undefined;
  children: ComponentChildren;
}) {
  const framed = p.frame !== undefined;
  const data = framed
    ? {
        'frame-origins': p.frame?.origins ? p.frame.origins.join(' ') : '*',
        'frame-status': p.end?.status,
        'frame-url': p.end?.url ?? undefined,
      }
    : {};
  return (
    <HostedPage
      lang={p.lang}
      title={p.title}
      scripts={p.scripts ?? []}
      test={p.test}
      framed={framed}
      data={data}
    >
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
  /** The payment's status as the widget names it (successful, failed, error, pending). */
  status?: string;
  /** Shown in a frame: the shop's window is told the end (frame.js), links leave the frame. */
  frame?: FrameInfo | undefined;
}

/** Every end of a checkout: paid, declined, waiting for the bank, expired, no longer valid. */
export function ResultPage(p: ResultProps) {
  const t = checkoutTexts(p.lang);
  const auto = p.autoContinue && p.continueUrl;
  // In a frame, the shop's page is opened in the buyer's whole window, never inside the frame.
  const top = p.frame ? '_top' : undefined;
  return (
    <CheckoutFrame
      lang={p.lang}
      title={p.title}
      test={p.test}
      scripts={auto ? ['checkout-continue.js'] : []}
      frame={p.frame}
      end={{ status: p.status, url: p.continueUrl }}
    >
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
          <a
            class="button primary"
            href={p.continueUrl}
            target={top}
            data-continue-after={auto ? '3' : undefined}
          >
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
