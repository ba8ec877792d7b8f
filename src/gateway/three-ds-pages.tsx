import type { ComponentChildren } from 'preact';
import { cardText } from '../pages/brand.js';
import { CsrfField, Details, Money } from '../pages/components.js';
import { HostedPage } from '../pages/document.js';
import type { PageLang } from '../pages/lang.js';
import { hostedProblemPage } from '../pages/problem.js';
import type { ProblemKind } from '../pages/scope.js';
import { type ThreeDsTexts, threeDsTexts } from './three-ds-texts.js';

/**
 * The pages of the cardholder's 3-D Secure step at `{gateway}/process/{uid}`: the challenge, the
 * frictionless step that submits itself, and the result. Forms have no action: they post back to the
 * page's own address, whatever prefix a proxy put before it.
 */

/** What the pages show of a payment. */
export interface PaymentView {
  amount: number;
  currency: string;
  description: string | null;
  card: { brand: string; last_4: string } | null;
  shopName: string | null;
  test: boolean;
  /** Started from a checkout page in a frame: laid out for it; the shop's origins, null: any site. */
  frame?: { origins: readonly string[] | null } | undefined;
}

function PaymentDetails({ t, p, lang }: { t: ThreeDsTexts; p: PaymentView; lang: PageLang }) {
  const rows: Array<[string, ComponentChildren]> = [];
  if (p.shopName) rows.push([t.shop, p.shopName]);
  rows.push([t.amount, <Money amount={p.amount} currency={p.currency} lang={lang} />]);
  if (p.card) rows.push([t.card, cardText(p.card)]);
  if (p.description) rows.push([t.description, p.description]);
  return <Details rows={rows} />;
}

interface StepPageProps {
  lang: PageLang;
  title: string;
  p: PaymentView;
  scripts?: string[];
  children: ComponentChildren;
}

function StepPage({ lang, title, p, scripts, children }: StepPageProps) {
  return (
    <HostedPage
      lang={lang}
      title={title}
      {...(scripts ? { scripts } : {})}
      test={p.test}
      framed={p.frame !== undefined}
      data={p.frame ? { 'frame-origins': p.frame.origins ? p.frame.origins.join(' ') : '*' } : {}}
    >
      {children}
    </HostedPage>
  );
}

function OutcomeForm(props: {
  token: string;
  outcome: 'passed' | 'failed';
  label: string;
  primary?: boolean;
}) {
  return (
    <form method="post">
      <CsrfField token={props.token} />
      <input type="hidden" name="outcome" value={props.outcome} />
      <button type="submit" class={props.primary ? 'primary' : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** The challenge: the cardholder chooses the result (this is the sandbox's bank). */
export function ChallengePage({ lang, p, token }: { lang: PageLang; p: PaymentView; token: string }) {
  const t = threeDsTexts(lang);
  return (
    <StepPage lang={lang} title={t.challengeTitle} p={p}>
      <h1>{t.challengeTitle}</h1>
      <p>{t.challengeIntro}</p>
      <PaymentDetails t={t} p={p} lang={lang} />
      <p class="note">{t.sandbox}</p>
      <div class="actions">
        <OutcomeForm token={token} outcome="passed" label={t.pass} primary />
        <OutcomeForm token={token} outcome="failed" label={t.fail} />
      </div>
    </StepPage>
  );
}

/**
 * A frictionless step: nothing to ask, so /assets/auto-submit.js sends the form as soon as the page is
 * read; without scripts its Continue button remains.
 */
export function FrictionlessPage({ lang, p, token }: { lang: PageLang; p: PaymentView; token: string }) {
  const t = threeDsTexts(lang);
  return (
    <StepPage lang={lang} title={t.checkingTitle} p={p} scripts={['auto-submit.js']}>
      <h1>{t.checkingTitle}</h1>
      <p>{t.checkingIntro}</p>
      <PaymentDetails t={t} p={p} lang={lang} />
      <form method="post" data-auto-submit class="actions">
        <CsrfField token={token} />
        <input type="hidden" name="outcome" value="passed" />
        <button type="submit" class="primary">
          {t.continue}
        </button>
      </form>
    </StepPage>
  );
}

/** The end of the step when there is nowhere to return to, or when it had ended already. */
export function ResultPage(props: {
  lang: PageLang;
  successful: boolean;
  /** The shop ended the step: the page says so rather than blaming the bank. */
  cancelled?: boolean;
  p: PaymentView;
  back: string | null;
}) {
  const { lang, successful, cancelled, p, back } = props;
  const t = threeDsTexts(lang);
  const title = successful ? t.successTitle : cancelled ? t.cancelledTitle : t.failedTitle;
  const text = successful ? t.successText : cancelled ? t.cancelledText : t.failedText;
  return (
    <StepPage lang={lang} title={title} p={p}>
      <h1 class={successful ? 'ok' : 'bad'}>{title}</h1>
      <p>{text}</p>
      <PaymentDetails t={t} p={p} lang={lang} />
      {back && (
        <div class="actions">
          <a class="button primary" href={back}>
            {t.back}
          </a>
        </div>
      )}
    </StepPage>
  );
}

/** The hosted pages' problem pages, except that an unknown uid says "payment", not "page", not found. */
export function threeDsProblemPage(lang: PageLang, kind: ProblemKind) {
  if (kind !== 'notFound') return hostedProblemPage(lang, kind);
  const t = threeDsTexts(lang);
  return (
    <HostedPage lang={lang} title={t.notFoundTitle}>
      <h1>{t.notFoundTitle}</h1>
      <p>{t.notFoundText}</p>
    </HostedPage>
  );
}
