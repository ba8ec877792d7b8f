import { createHash } from 'node:crypto';
import { formatMoney } from '../money/currencies.js';

/**
 * The HTML of the 3-D Secure page at `{gateway}/process/{uid}`: small self-contained documents
 * (inline CSS, no external assets), so the page works wherever the gateway runs. Every value that
 * comes from a request or the store goes through `esc`.
 */

const TEXTS = {
  en: {
    challengeTitle: '3-D Secure authentication',
    challengeIntro: 'Confirm this payment with your bank.',
    sandbox: 'This is a Kopek sandbox page: choose how the authentication ends.',
    shop: 'Shop',
    amount: 'Amount',
    card: 'Card',
    description: 'Description',
    pass: 'Pass authentication',
    fail: 'Fail authentication',
    checkingTitle: 'Checking your card',
    checkingIntro: 'Your bank is confirming the payment. This takes a moment.',
    continue: 'Continue',
    successTitle: 'Payment successful',
    successText: 'The payment has been completed.',
    failedTitle: 'Payment failed',
    failedText: 'Your bank did not confirm the payment.',
    back: 'Return to the shop',
    notFoundTitle: 'Payment not found',
    notFoundText: 'This link is not valid. Return to the shop and try again.',
    badRequestTitle: 'Request not understood',
    badRequestText: 'This page could not handle the request. Return to the shop and try again.',
    unavailableTitle: 'Temporarily unavailable',
    unavailableText: 'Please try again in a moment.',
  },
  ru: {
    challengeTitle: 'Проверка 3-D Secure',
    challengeIntro: 'Подтвердите этот платёж в своём банке.',
    sandbox: 'Это тестовая страница песочницы Kopek: выберите, чем закончится проверка.',
    shop: 'Магазин',
    amount: 'Сумма',
    card: 'Карта',
    description: 'Назначение',
    pass: 'Пройти проверку',
    fail: 'Не пройти проверку',
    checkingTitle: 'Проверяем карту',
    checkingIntro: 'Банк подтверждает платёж. Это займёт мгновение.',
    continue: 'Продолжить',
    successTitle: 'Платёж прошёл успешно',
    successText: 'Платёж выполнен.',
    failedTitle: 'Платёж не прошёл',
    failedText: 'Банк не подтвердил платёж.',
    back: 'Вернуться в магазин',
    notFoundTitle: 'Платёж не найден',
    notFoundText: 'Ссылка недействительна. Вернитесь в магазин и попробуйте ещё раз.',
    badRequestTitle: 'Запрос не распознан',
    badRequestText: 'Страница не смогла обработать запрос. Вернитесь в магазин и попробуйте ещё раз.',
    unavailableTitle: 'Сервис временно недоступен',
    unavailableText: 'Попробуйте ещё раз через минуту.',
  },
} as const;

export type PageLang = keyof typeof TEXTS;
type Texts = (typeof TEXTS)[PageLang];

/** The page's language: the transaction's when translated, English otherwise (and `lang` says so). */
export function pageLang(language: string | null | undefined): PageLang {
  return language === 'ru' ? 'ru' : 'en';
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const esc = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

const BRANDS: Record<string, string> = {
  visa: 'Visa',
  master: 'Mastercard',
  maestro: 'Maestro',
  amex: 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  diners: 'Diners Club',
  unionpay: 'UnionPay',
  mir: 'Mir',
  belkart: 'Belkart',
};

const STYLE = `*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;padding:1rem;
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2933;background:#eef2f6}
main{width:100%;max-width:26rem;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 4px 24px rgba(15,23,42,.12)}
h1{font-size:1.4rem;margin:0 0 .5rem}p{margin:.5rem 0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:1.25rem 0;padding:1rem;background:#f5f7fa;border-radius:8px}
dt{color:#52606d}dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.note{font-size:.9rem;color:#52606d;border-left:3px solid #9aa5b1;padding-left:.75rem}
.actions{display:grid;gap:.75rem;margin-top:1.5rem}form{margin:0}
button,.button{display:block;width:100%;padding:.8rem 1rem;font:inherit;font-weight:600;text-align:center;
text-decoration:none;border-radius:8px;border:2px solid #1d4ed8;cursor:pointer}
.primary{background:#1d4ed8;color:#fff}.secondary{background:#fff;color:#1d4ed8}
button:focus-visible,.button:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.ok{color:#047857}.bad{color:#b91c1c}`;

// Submits the frictionless step's form at once; its hash lets the Content-Security-Policy allow it.
const AUTO_SUBMIT = "document.getElementById('continue').submit();";
const AUTO_SUBMIT_HASH = createHash('sha256').update(AUTO_SUBMIT).digest('base64');

/** Headers of every page: nothing cached, nothing framed, no uid leaked to the shop in a Referer. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${AUTO_SUBMIT_HASH}'; base-uri 'none'; frame-ancestors 'none'`,
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
} as const;

function document(lang: PageLang, title: string, body: string): string {
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** What the pages show of a payment. */
export interface PaymentView {
  amount: number;
  currency: string;
  description: string | null;
  card: { brand: string; last_4: string } | null;
  shopName: string | null;
}

function details(t: Texts, p: PaymentView): string {
  const rows: [string, string][] = [];
  if (p.shopName) rows.push([t.shop, p.shopName]);
  rows.push([t.amount, formatMoney(p.amount, p.currency)]);
  if (p.card) rows.push([t.card, `${BRANDS[p.card.brand] ?? 'Card'} •••• ${p.card.last_4}`]);
  if (p.description) rows.push([t.description, p.description]);
  return `<dl>${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>`;
}

// Forms have no action: they post back to the page's own address, whatever prefix a proxy put before it.
const outcomeForm = (outcome: string, label: string, kind: string) =>
  `<form method="post"><input type="hidden" name="outcome" value="${outcome}"><button type="submit" class="${kind}">${esc(label)}</button></form>`;

/** The challenge: the cardholder chooses the result (this is the sandbox's bank). */
export function challengePage(lang: PageLang, p: PaymentView): string {
  const t = TEXTS[lang];
  return document(
    lang,
    t.challengeTitle,
    `<h1>${esc(t.challengeTitle)}</h1>
<p>${esc(t.challengeIntro)}</p>
${details(t, p)}
<p class="note">${esc(t.sandbox)}</p>
<div class="actions">
${outcomeForm('passed', t.pass, 'primary')}
${outcomeForm('failed', t.fail, 'secondary')}
</div>`,
  );
}

/** A frictionless step: nothing to ask, the form submits itself (a button remains without scripts). */
export function frictionlessPage(lang: PageLang, p: PaymentView): string {
  const t = TEXTS[lang];
  return document(
    lang,
    t.checkingTitle,
    `<h1>${esc(t.checkingTitle)}</h1>
<p>${esc(t.checkingIntro)}</p>
${details(t, p)}
<form id="continue" method="post"><input type="hidden" name="outcome" value="passed"><button type="submit" class="primary">${esc(t.continue)}</button></form>
<script>${AUTO_SUBMIT}</script>`,
  );
}

/** The end of the step when there is nowhere to return to, or when it had ended already. */
export function resultPage(lang: PageLang, successful: boolean, p: PaymentView, back: string | null): string {
  const t = TEXTS[lang];
  const title = successful ? t.successTitle : t.failedTitle;
  return document(
    lang,
    title,
    `<h1 class="${successful ? 'ok' : 'bad'}">${esc(title)}</h1>
<p>${esc(successful ? t.successText : t.failedText)}</p>
${details(t, p)}
${back ? `<div class="actions"><a class="button primary" href="${esc(back)}">${esc(t.back)}</a></div>` : ''}`,
  );
}

export type ProblemKind = 'notFound' | 'badRequest' | 'unavailable';

/** A page for a request the step cannot serve: people get a page, never the API's JSON. */
export function problemPage(lang: PageLang, kind: ProblemKind): string {
  const t = TEXTS[lang];
  const pages: Record<ProblemKind, [string, string]> = {
    notFound: [t.notFoundTitle, t.notFoundText],
    badRequest: [t.badRequestTitle, t.badRequestText],
    unavailable: [t.unavailableTitle, t.unavailableText],
  };
  const [title, text] = pages[kind];
  return document(lang, title, `<h1>${esc(title)}</h1>\n<p>${esc(text)}</p>`);
}
