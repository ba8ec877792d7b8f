import { Field } from './components.js';
import { defineTexts, type PageLang } from './lang.js';

/**
 * The card fields of the hosted pages (product payment and subscription checkout): the standard
 * autocomplete tokens so browsers fill them, numeric keyboards on phones, and hints the script in
 * card-form.js adds as the buyer types. Without scripts the form posts as it is and the server
 * checks it with the gateway's own card rules.
 */

export const cardFormTexts = defineTexts({
  en: {
    legend: 'Card',
    number: 'Card number',
    holder: 'Name on card',
    expMonth: 'Expiry month (MM)',
    expYear: 'Expiry year (YYYY)',
    cvc: 'Security code (CVC)',
    cvcHint: '3 digits on the back, 4 on the front for American Express',
  },
  ru: {
    legend: 'Карта',
    number: 'Номер карты',
    holder: 'Имя на карте',
    expMonth: 'Месяц окончания (ММ)',
    expYear: 'Год окончания (ГГГГ)',
    cvc: 'Код безопасности (CVC)',
    cvcHint: '3 цифры на обороте, 4 на лицевой стороне у American Express',
  },
});

export interface CardFormValues {
  holder?: string;
  expMonth?: string;
  expYear?: string;
}

/** Card problems by field name (card_number, card_holder, card_exp_month, card_exp_year, card_cvc). */
export type CardErrors = Partial<Record<CardField, string>>;
export type CardField = 'card_number' | 'card_holder' | 'card_exp_month' | 'card_exp_year' | 'card_cvc';

/** The card number and CVC are never put back into a page: a buyer retypes them after a problem. */
export function CardFields({
  lang,
  values = {},
  errors = {},
}: {
  lang: PageLang;
  values?: CardFormValues;
  errors?: CardErrors;
}) {
  const t = cardFormTexts(lang);
  return (
    <fieldset class="card-fields" data-card-form>
      <legend>{t.legend}</legend>
      <div class="card-number">
        <Field
          name="card_number"
          label={t.number}
          autocomplete="cc-number"
          inputmode="numeric"
          required
          maxLength={23}
          error={errors.card_number}
        />
        <span class="brand" data-brand aria-live="polite" />
      </div>
      <Field
        name="card_holder"
        label={t.holder}
        autocomplete="cc-name"
        required
        maxLength={128}
        value={values.holder}
        error={errors.card_holder}
      />
      <div class="row">
        <Field
          name="card_exp_month"
          label={t.expMonth}
          autocomplete="cc-exp-month"
          inputmode="numeric"
          required
          maxLength={2}
          size="short"
          value={values.expMonth}
          error={errors.card_exp_month}
        />
        <Field
          name="card_exp_year"
          label={t.expYear}
          autocomplete="cc-exp-year"
          inputmode="numeric"
          required
          maxLength={4}
          size="short"
          value={values.expYear}
          error={errors.card_exp_year}
        />
        <Field
          name="card_cvc"
          label={t.cvc}
          type="password"
          autocomplete="cc-csc"
          inputmode="numeric"
          required
          maxLength={4}
          size="short"
          hint={t.cvcHint}
          error={errors.card_cvc}
        />
      </div>
    </fieldset>
  );
}

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/**
 * The gateway's `credit_card` object from a posted form: spaces and dashes the buyer typed in the
 * number are dropped, the year may be written with two digits. Validation is the gateway's.
 */
export function creditCardFromForm(body: Record<string, unknown>): Record<string, unknown> {
  const month = str(body.card_exp_month);
  let year = str(body.card_exp_year);
  if (/^\d{2}$/.test(year)) year = `20${year}`;
  return {
    number: str(body.card_number).replace(/[\s-]/g, ''),
    holder: str(body.card_holder),
    exp_month: /^\d$/.test(month) ? `0${month}` : month,
    exp_year: /^\d+$/.test(year) ? Number(year) : year,
    verification_value: str(body.card_cvc),
  };
}

/** Where each of the gateway's `credit_card.*` error keys is shown on the form. */
export const CARD_ERROR_FIELDS: Record<string, CardField> = {
  'credit_card.number': 'card_number',
  'credit_card.holder': 'card_holder',
  'credit_card.exp_month': 'card_exp_month',
  'credit_card.exp_year': 'card_exp_year',
  'credit_card.verification_value': 'card_cvc',
};
