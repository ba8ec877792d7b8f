import type { ComponentChildren } from 'preact';
import { moneyText } from '../money/currencies.js';
import type { PageLang } from './lang.js';
import { pageTexts } from './texts.js';

/** The CSRF token every form carries (see security.ts). */
export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

/**
 * Money as the page's language writes it ("€19.99", "19,99 €"), always through the currency's
 * exponent: JPY without decimals, KWD with three.
 */
export function Money({ amount, currency, lang }: { amount: number; currency: string; lang: PageLang }) {
  return <span class="money">{moneyText(amount, currency, lang)}</span>;
}

export interface FieldProps {
  name: string;
  label: string;
  value?: string | undefined;
  type?: 'text' | 'email' | 'tel' | 'password' | 'date' | 'number' | 'url' | 'search';
  /** The standard token (cc-number, email, tel, …) so browsers and password managers fill it. */
  autocomplete?: string;
  inputmode?: 'numeric' | 'email' | 'tel' | 'text';
  required?: boolean;
  readOnly?: boolean;
  /** The field's problem, shown under it and announced with it. */
  error?: string | undefined;
  /** Text, or text with pieces kept as they are (an API name in a `<code>`). */
  hint?: ComponentChildren;
  maxLength?: number;
  pattern?: string;
  placeholder?: string;
  /** Extra class for layout (e.g. "short"). */
  size?: 'short' | 'wide';
  /** A choice among these (value, label) pairs: the field is a select with `value` chosen. */
  options?: ReadonlyArray<readonly [value: string, label: string]>;
  /** The values are names kept as they are in every language (time zone ids): `translate="no"`. */
  verbatim?: boolean;
}

// Preact's input types narrow attributes by `type`; a field chooses its type at run time.
function inputAttributes(p: FieldProps, id: string, described: string): Record<string, unknown> {
  return {
    id,
    name: p.name,
    type: p.type ?? 'text',
    value: p.value ?? '',
    autocomplete: p.autocomplete,
    inputMode: p.inputmode,
    required: p.required,
    readOnly: p.readOnly,
    maxLength: p.maxLength,
    pattern: p.pattern,
    placeholder: p.placeholder,
    'aria-invalid': p.error ? 'true' : undefined,
    'aria-describedby': described || undefined,
  };
}

/** The ids of a control's hint and error, for its aria-describedby. */
export function describedBy(id: string, hint: unknown, error: unknown): string | undefined {
  return [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
}

/** The hint and the error under a control, with the ids its aria-describedby names. */
export function FieldNotes({
  id,
  hint,
  error,
}: {
  id: string;
  hint?: ComponentChildren;
  error?: string | undefined;
}) {
  return (
    <>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </>
  );
}

/** One labelled input (or, given options, a select) with its hint and error, tied together for screen readers. */
export function Field(p: FieldProps) {
  const id = `f-${p.name}`;
  const described = describedBy(id, p.hint, p.error) ?? '';
  return (
    <div class={`field${p.size ? ` ${p.size}` : ''}${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      {p.options ? (
        <select
          id={id}
          name={p.name}
          {...(p.verbatim ? { translate: 'no' as unknown as boolean } : {})}
          aria-invalid={p.error ? 'true' : undefined}
          aria-describedby={described || undefined}
        >
          {p.options.map(([value, label]) => (
            <option value={value} selected={value === (p.value ?? '')}>
              {label}
            </option>
          ))}
        </select>
      ) : (
        <input {...inputAttributes(p, id, described)} />
      )}
      <FieldNotes id={id} hint={p.hint} error={p.error} />
    </div>
  );
}

/** A summary of a form's problems at its top, focused first by keyboard users. */
export function ErrorSummary({ title, errors }: { title: string; errors: string[] }) {
  if (errors.length === 0) return null;
  return (
    <div class="error-summary" role="alert" tabIndex={-1}>
      <h2>{title}</h2>
      <ul>
        {errors.map((e) => (
          <li>{e}</li>
        ))}
      </ul>
    </div>
  );
}

/** Label and value pairs (amount, shop, card…). */
export function Details({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="details">
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/** Test products and sandbox shops say so on every page, in one wording: nothing real is charged there. */
export function TestBanner({ lang }: { lang: PageLang }) {
  return (
    <div class="test-banner" role="note">
      {pageTexts(lang).testBanner}
    </div>
  );
}
