import type { ComponentChildren } from 'preact';
import { moneyText } from '../../money/currencies.js';
import { cardText } from '../../pages/brand.js';
import { type CardErrors, CardFields, type CardFormValues } from '../../pages/card-form.js';
import { CsrfField, Details, ErrorSummary, Field, Money } from '../../pages/components.js';
import { HostedPage } from '../../pages/document.js';
import { fill, type PageLang } from '../../pages/lang.js';
import {
  type BuyerErrors,
  type BuyerField,
  type BuyerValues,
  countryOptions,
  FIELD_SHAPES,
} from './fields.js';
import { type ProductTexts, productTexts } from './texts.js';

/** What every product page shows of the product. */
export interface ProductView {
  name: string;
  description: string;
  amount: number;
  currency: string;
  shopName: string;
  /** A test product or a sandbox shop: the banner says nothing real is charged. */
  test: boolean;
}

function Frame(props: {
  lang: PageLang;
  title: string;
  test: boolean;
  scripts?: string[];
  head?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <HostedPage
      lang={props.lang}
      title={props.title}
      scripts={props.scripts ?? []}
      head={props.head}
      test={props.test}
    >
      {props.children}
    </HostedPage>
  );
}

function CountryField(p: { label: string; choose: string; lang: PageLang; value?: string; error?: string }) {
  const id = 'f-country';
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <select
        id={id}
        name="country"
        autocomplete="country"
        required
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={p.error ? `${id}-error` : undefined}
      >
        <option value="">{p.choose}</option>
        {countryOptions(p.lang).map(([code, name]) => (
          <option value={code} selected={code === p.value}>
            {name}
          </option>
        ))}
      </select>
      {p.error && (
        <p class="error" id={`${id}-error`}>
          {p.error}
        </p>
      )}
    </div>
  );
}

function BuyerInput(p: {
  field: BuyerField;
  t: ProductTexts;
  lang: PageLang;
  value?: string;
  error?: string;
}) {
  const shape = FIELD_SHAPES[p.field];
  if (shape.type === 'country')
    return (
      <CountryField
        label={p.t.country}
        choose={p.t.countryChoose}
        lang={p.lang}
        value={p.value}
        error={p.error}
      />
    );
  const hint = p.field === 'phone' ? p.t.phoneHint : p.field === 'state' ? p.t.stateHint : undefined;
  return (
    <Field
      name={p.field}
      label={p.t[p.field]}
      type={shape.type}
      autocomplete={shape.autocomplete}
      inputmode={shape.inputmode}
      maxLength={shape.max}
      required
      value={p.value}
      error={p.error}
      hint={hint}
    />
  );
}

export interface PayPageProps {
  lang: PageLang;
  product: ProductView;
  authorization: boolean;
  fields: BuyerField[];
  csrfToken: string;
  orderId: string;
  values?: BuyerValues;
  errors?: BuyerErrors;
  card?: CardFormValues;
  cardErrors?: CardErrors;
  /** Problems not tied to one field (shown in the summary only). */
  otherErrors?: string[];
}

/** The product payment page: what is bought, for how much, the buyer's fields and the card form. */
export function PayPage(p: PayPageProps) {
  const t = productTexts(p.lang);
  const errors = p.errors ?? {};
  const summary = [
    ...p.fields.flatMap((f) => (errors[f] ? [`${t[f]}: ${errors[f]}`] : [])),
    ...Object.values(p.cardErrors ?? {}),
    ...(p.otherErrors ?? []),
  ];
  return (
    <Frame lang={p.lang} title={p.product.name} test={p.product.test} scripts={['card-form.js']}>
      <h1>{p.product.name}</h1>
      <p class="product-description">{p.product.description}</p>
      <Details
        rows={[
          [t.price, <Money amount={p.product.amount} currency={p.product.currency} lang={p.lang} />],
          [t.seller, p.product.shopName],
        ]}
      />
      <ErrorSummary title={t.errorsTitle} errors={summary} />
      <form method="post">
        <CsrfField token={p.csrfToken} />
        <input type="hidden" name="order" value={p.orderId} />
        {p.fields.length > 0 && (
          <fieldset>
            <legend>{t.buyerLegend}</legend>
            {p.fields.map((f) => (
              <BuyerInput field={f} t={t} lang={p.lang} value={p.values?.[f]} error={errors[f]} />
            ))}
          </fieldset>
        )}
        <CardFields lang={p.lang} values={p.card} errors={p.cardErrors} />
        {p.authorization && <p class="note">{t.authorizeNote}</p>}
        <div class="actions">
          <button type="submit" class="primary">
            {fill(t.pay, { amount: moneyText(p.product.amount, p.product.currency, p.lang) })}
          </button>
        </div>
      </form>
    </Frame>
  );
}

function ReturnLink({ href, text }: { href: string | null; text: string }) {
  if (!href) return null;
  return (
    <div class="actions">
      <a class="button primary" href={href}>
        {text}
      </a>
    </div>
  );
}

/** A product that cannot be paid now: sold out or past its time. Nothing was charged. */
export function ClosedPage(p: {
  lang: PageLang;
  product: ProductView;
  kind: 'soldOut' | 'expired';
  back: string | null;
}) {
  const t = productTexts(p.lang);
  const [title, text] =
    p.kind === 'soldOut' ? [t.soldOutTitle, t.soldOutText] : [t.expiredTitle, t.expiredText];
  return (
    <Frame lang={p.lang} title={title} test={p.product.test}>
      <h1>{title}</h1>
      <p>{fill(text, { name: p.product.name })}</p>
      <ReturnLink href={p.back} text={t.backToShop} />
    </Frame>
  );
}

export type ResultKind = 'success' | 'authorized' | 'declined' | 'error' | 'pending';

export interface ResultPageProps {
  lang: PageLang;
  product: ProductView;
  kind: ResultKind;
  uid: string | null;
  card: { brand: string; last_4: string } | null;
  /** The shop's return address with uid and status: followed after 3 s, or at once by the button. */
  continueUrl: string | null;
  /** For a payment still being processed: this page again, a little later. */
  refreshUrl?: string;
  /** For a declined payment: the product's page, to try another card. */
  tryAgainUrl?: string | null;
}

/** After paying: the outcome in the buyer's language, then back to the shop. */
export function ResultPage(p: ResultPageProps) {
  const t = productTexts(p.lang);
  const [title, text] = {
    success: [t.successTitle, t.successText],
    authorized: [t.authorizedTitle, t.authorizedText],
    declined: [t.declinedTitle, t.declinedText],
    error: [t.errorTitle, t.errorText],
    pending: [t.pendingTitle, t.pendingText],
  }[p.kind] as [string, string];
  const good = p.kind === 'success' || p.kind === 'authorized';
  const refresh = p.refreshUrl
    ? `3;url=${p.refreshUrl}`
    : p.continueUrl
      ? `3;url=${p.continueUrl}`
      : undefined;
  const rows: Array<[string, ComponentChildren]> = [
    [t.amount, <Money amount={p.product.amount} currency={p.product.currency} lang={p.lang} />],
  ];
  if (p.card) rows.push([t.card, cardText(p.card)]);
  if (p.uid) rows.push([t.transaction, <code>{p.uid}</code>]);
  return (
    <Frame
      lang={p.lang}
      title={title}
      test={p.product.test}
      head={refresh ? <meta http-equiv="refresh" content={refresh} /> : undefined}
    >
      <h1 class={good ? 'ok' : p.kind === 'pending' ? undefined : 'bad'} data-result={p.kind}>
        {title}
      </h1>
      <p>{fill(text, { name: p.product.name })}</p>
      <Details rows={rows} />
      {p.continueUrl && !p.refreshUrl && <p class="muted">{t.redirecting}</p>}
      <ReturnLink href={p.continueUrl} text={t.backToShop} />
      {p.tryAgainUrl && !p.continueUrl && (
        <div class="actions">
          <a class="button" href={p.tryAgainUrl}>
            {t.tryAgain}
          </a>
        </div>
      )}
    </Frame>
  );
}
