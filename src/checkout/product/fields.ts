import { isCalendarDate } from '../../calendar/iso-instant.js';
import { addressProblems } from '../../core/address.js';
import { isCountry, isEmail } from '../../core/rules.js';
import type { PageLang } from '../../pages/lang.js';
import { productTexts } from './texts.js';

/**
 * The buyer fields a product asks for (`visible_fields`): how each is shown (input type and the
 * standard autocomplete token), how it is checked (every listed field is mandatory), and where it
 * goes in the gateway's request (customer, billing_address, or additional_data when the protocol has
 * no place for it).
 */

export type BuyerField =
  | 'first_name'
  | 'last_name'
  | 'email'
  | 'phone'
  | 'birth_date'
  | 'country'
  | 'state'
  | 'city'
  | 'address'
  | 'zip'
  | 'taxpayer_id';

export interface FieldShape {
  type: 'text' | 'email' | 'tel' | 'date' | 'country';
  autocomplete: string;
  max: number;
  inputmode?: 'numeric' | 'email' | 'tel' | 'text';
}

export const FIELD_SHAPES: Record<BuyerField, FieldShape> = {
  first_name: { type: 'text', autocomplete: 'given-name', max: 255 },
  last_name: { type: 'text', autocomplete: 'family-name', max: 255 },
  email: { type: 'email', autocomplete: 'email', max: 254, inputmode: 'email' },
  phone: { type: 'tel', autocomplete: 'tel', max: 32, inputmode: 'tel' },
  birth_date: { type: 'date', autocomplete: 'bday', max: 10 },
  country: { type: 'country', autocomplete: 'country', max: 2 },
  state: { type: 'text', autocomplete: 'address-level1', max: 32 },
  city: { type: 'text', autocomplete: 'address-level2', max: 255 },
  address: { type: 'text', autocomplete: 'street-address', max: 255 },
  zip: { type: 'text', autocomplete: 'postal-code', max: 16 },
  taxpayer_id: { type: 'text', autocomplete: 'off', max: 64 },
};

/** Shown in this order, whatever order the shop listed them in: names, contacts, then the address. */
const ORDER: BuyerField[] = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'birth_date',
  'country',
  'state',
  'city',
  'address',
  'zip',
  'taxpayer_id',
];

export function buyerFieldsOf(visible: readonly string[]): BuyerField[] {
  return ORDER.filter((f) => visible.includes(f));
}

export type BuyerValues = Partial<Record<BuyerField, string>>;
export type BuyerErrors = Partial<Record<BuyerField, string>>;

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

/**
 * Reads and checks the posted buyer fields: each listed one is required and checked for its kind
 * (e-mail, phone, a real birth date in the past, a known country, a US ZIP or a US/CA state code when
 * the country says so). Error texts are in the buyer's language.
 */
export function readBuyerFields(
  fields: readonly BuyerField[],
  body: Record<string, unknown>,
  lang: PageLang,
  today: Date,
): { values: BuyerValues; errors: BuyerErrors } {
  const t = productTexts(lang);
  const values: BuyerValues = {};
  const errors: BuyerErrors = {};
  for (const field of fields) {
    let value = text(body[field]);
    if (field === 'country' || field === 'state') value = value.toUpperCase();
    values[field] = value;
    if (value === '') errors[field] = t.errRequired;
    else if (value.length > FIELD_SHAPES[field].max) errors[field] = t.errTooLong;
  }
  const check = (field: BuyerField, ok: (v: string) => boolean, message: string) => {
    const v = values[field];
    if (v !== undefined && v !== '' && !errors[field] && !ok(v)) errors[field] = message;
  };
  check('email', isEmail, t.errEmail);
  check('phone', (v) => /^\+?[\d\s().-]+$/.test(v) && (v.match(/\d/g) ?? []).length >= 5, t.errPhone);
  check(
    'birth_date',
    (v) => isCalendarDate(v) && v >= '1900-01-01' && v <= today.toISOString().slice(0, 10),
    t.errBirthDate,
  );
  // The same address rules as the API's (core/address.ts), worded for the buyer.
  const problems = addressProblems({
    country: errors.country ? undefined : values.country,
    state: errors.state ? undefined : values.state,
    zip: errors.zip ? undefined : values.zip,
  });
  if (problems.has('country')) errors.country = t.errCountry;
  if (problems.has('zip')) errors.zip = t.errUsZip;
  if (problems.has('state')) errors.state = t.errState;
  return { values, errors };
}

/** The gateway request's parts that carry the buyer's fields; `customer.ip` is the buyer's address. */
export function buyerRequestParts(values: BuyerValues, ip: string | undefined) {
  const pick = (...names: BuyerField[]) => {
    const out: Record<string, string> = {};
    for (const n of names) {
      const v = values[n];
      if (v !== undefined && v !== '') out[n] = v;
    }
    return out;
  };
  const customer: Record<string, string> = pick('email', 'birth_date');
  if (ip) customer.ip = ip;
  const billing = pick('first_name', 'last_name', 'country', 'state', 'city', 'address', 'zip', 'phone');
  return {
    customer,
    billingAddress: Object.keys(billing).length > 0 ? billing : undefined,
    // The protocol has no member for a taxpayer id: it travels with the transaction's additional_data.
    extra: pick('taxpayer_id'),
  };
}

/** Gateway error keys (`customer.email`, `billing_address.zip`) back to the form's fields. */
export function buyerFieldOfGatewayKey(key: string): BuyerField | undefined {
  const m = /^(?:customer|billing_address)\.(\w+)$/.exec(key);
  const name = m?.[1];
  return name && name in FIELD_SHAPES ? (name as BuyerField) : undefined;
}

const COUNTRY_CODES: string[] = [];
for (let a = 65; a <= 90; a++)
  for (let b = 65; b <= 90; b++) {
    const code = String.fromCharCode(a, b);
    if (isCountry(code)) COUNTRY_CODES.push(code);
  }

const countryLists = new Map<PageLang, Array<[string, string]>>();

/** Every country the gateway accepts, named in the buyer's language and sorted by that name. */
export function countryOptions(lang: PageLang): Array<[string, string]> {
  let list = countryLists.get(lang);
  if (!list) {
    const names = new Intl.DisplayNames([lang], { type: 'region' });
    list = COUNTRY_CODES.map((code): [string, string] => [code, names.of(code) ?? code]).sort((x, y) =>
      x[1].localeCompare(y[1], lang),
    );
    countryLists.set(lang, list);
  }
  return list;
}
