import { CardMsg } from '../cards/index.js';
import type { ErrorTree } from '../core/errors.js';
import { CARD_ERROR_FIELDS } from '../pages/card-form.js';
import { defineTexts, type PageLang } from '../pages/lang.js';
import { type CheckoutTexts, checkoutTexts } from './texts.js';

/** The customer fields a checkout form may show, with their labels and autocomplete tokens. */
export const CUSTOMER_FIELDS = {
  email: { label: 'email', autocomplete: 'email', type: 'email' },
  first_name: { label: 'firstName', autocomplete: 'given-name', type: 'text' },
  last_name: { label: 'lastName', autocomplete: 'family-name', type: 'text' },
  phone: { label: 'phone', autocomplete: 'tel', type: 'tel' },
  country: { label: 'country', autocomplete: 'country', type: 'text' },
  state: { label: 'state', autocomplete: 'address-level1', type: 'text' },
  city: { label: 'city', autocomplete: 'address-level2', type: 'text' },
  address: { label: 'address', autocomplete: 'street-address', type: 'text' },
  zip: { label: 'zip', autocomplete: 'postal-code', type: 'text' },
  birth_date: { label: 'birthDate', autocomplete: 'bday', type: 'date' },
} as const satisfies Record<string, { label: keyof CheckoutTexts; autocomplete: string; type: string }>;

export type CustomerField = keyof typeof CUSTOMER_FIELDS;
export const CUSTOMER_FIELD_NAMES = Object.keys(CUSTOMER_FIELDS) as CustomerField[];

export const cardLabels = defineTexts({
  en: {
    card_number: 'Card number',
    card_holder: 'Name on card',
    card_exp_month: 'Expiry month',
    card_exp_year: 'Expiry year',
    card_cvc: 'Security code',
  },
  ru: {
    card_number: 'Номер карты',
    card_holder: 'Имя на карте',
    card_exp_month: 'Месяц окончания',
    card_exp_year: 'Год окончания',
    card_cvc: 'Код безопасности',
  },
});

/** The card rules' own words where a buyer needs more than the API's message. */
const cardRuleTexts = defineTexts({
  en: { numberNotValid: 'not valid (a digit is wrong): check it against the card' },
  ru: { numberNotValid: 'номер недействителен (неверна одна из цифр): сверьте его с картой' },
});

export interface FormProblems {
  /** By the form's field name: card_number, email, … */
  fields: Record<string, string>;
  /** Everything, for the summary at the top. */
  messages: string[];
}

function walk(tree: ErrorTree, path: string[], out: Array<[string, string]>): void {
  for (const [key, value] of Object.entries(tree)) {
    if (Array.isArray(value)) for (const msg of value) out.push([[...path, key].join('.'), msg]);
    else walk(value, [...path, key], out);
  }
}

/** A verb's error tree as the form shows it: under each field, and all of them at the top. */
export function formProblems(tree: ErrorTree, lang: PageLang): FormProblems {
  const t = checkoutTexts(lang);
  const pairs: Array<[string, string]> = [];
  walk(tree, [], pairs);
  const fields: Record<string, string> = {};
  const messages: string[] = [];
  for (const [path, msg] of pairs) {
    const card = CARD_ERROR_FIELDS[path];
    const customer = path.startsWith('customer.') ? (path.slice(9) as CustomerField) : undefined;
    let label: string | undefined;
    let field: string | undefined;
    if (card) {
      field = card;
      label = cardLabels(lang)[card];
    } else if (customer && customer in CUSTOMER_FIELDS) {
      field = customer;
      label = t[CUSTOMER_FIELDS[customer].label];
    }
    const notValid = field === 'card_number' && msg === CardMsg.luhn;
    const said = notValid ? cardRuleTexts(lang).numberNotValid : msg;
    const shown = lang === 'en' || notValid ? said : t.fieldProblem.replace('{label}: ', '');
    if (field && label) {
      fields[field] ??= shown;
      messages.push(
        notValid ? `${label}: ${said}` : t.fieldProblem.replace('{label}', label).replace('{message}', said),
      );
    } else messages.push(t.cardProblem.replace('{message}', msg));
  }
  return { fields, messages: [...new Set(messages)] };
}
