import { type Fields, isCountry } from './rules.js';

/**
 * The address rules every surface shares: the customers API (and a customer given inside a
 * subscription), the gateway's billing_address, the checkout API's customer, and the hosted pages
 * (the product payment page, the checkout pages). docs/api-decisions.md#addresses says why.
 *
 * - `country` is an ISO 3166-1 alpha-2 code in any case (`us`, `Us`), kept in upper case.
 * - `state` for the US and Canada is the postal code of a real subdivision, in any case, kept in
 *   upper case: the 50 states, DC, the inhabited territories (AS, GU, MP, PR, VI) and the armed
 *   forces codes (AA, AE, AP), which cards are issued to; Canada's 10 provinces and 3 territories.
 * - A US `zip` is NNNNN or NNNNN-NNNN.
 */

export const US_STATES: ReadonlySet<string> = new Set(
  `AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC
  ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI AA AE AP`
    .split(/\s+/)
    .filter(Boolean),
);

export const CA_PROVINCES: ReadonlySet<string> = new Set('AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' '));

const US_ZIP = /^\d{5}(-\d{4})?$/;

/** The stored form of a country or a state code: upper case, as ISO 3166 and the postal services write them. */
export const addressCode = (value: string): string => value.trim().toUpperCase();

/** A country code in any case. */
export const isCountryCode = (value: string): boolean => isCountry(addressCode(value));

/** Countries whose state is a subdivision code (and required to be one when given). */
export const hasStates = (country: string | null | undefined): boolean => {
  const c = country ? addressCode(country) : '';
  return c === 'US' || c === 'CA';
};

/** The state is a real subdivision of the country (US or CA); any state of another country passes. */
export function isSubdivision(country: string, state: string): boolean {
  const c = addressCode(country);
  const s = addressCode(state);
  if (c === 'US') return US_STATES.has(s);
  if (c === 'CA') return CA_PROVINCES.has(s);
  return true;
}

export type AddressProblem = 'country' | 'state' | 'zip';

/**
 * What is wrong with an address, field by field, for the caller to word (English in the API, the
 * buyer's language on a page). Empty or absent fields are not checked: whether they are required
 * is the caller's rule.
 */
export function addressProblems(address: {
  country?: string | null;
  state?: string | null;
  zip?: string | null;
}): Set<AddressProblem> {
  const problems = new Set<AddressProblem>();
  const { country, state, zip } = address;
  if (!country) return problems;
  if (!isCountryCode(country)) {
    problems.add('country');
    return problems;
  }
  if (state && hasStates(country) && !isSubdivision(country, state)) problems.add('state');
  if (zip && addressCode(country) === 'US' && !US_ZIP.test(zip)) problems.add('zip');
  return problems;
}

/** The API's words for each problem. */
export const AddressMsg = {
  country: 'is invalid',
  usState: 'must be the code of a US state, DC or territory, such as NY',
  caProvince: 'must be the code of a Canadian province or territory, such as ON',
  usZip: 'must be NNNNN or NNNNN-NNNN for the US',
  stateOnlyUsCa: 'is allowed only when country is US or CA',
} as const;

/** The API's message for a state that is not a subdivision of `country` (US or CA). */
export const stateMessage = (country: string): string =>
  addressCode(country) === 'CA' ? AddressMsg.caProvince : AddressMsg.usState;

/**
 * Checks the country, state and zip of `values` (read from the fields of `f`), recording the API's
 * messages on `f`, and puts the country and a US/CA state in their stored upper case.
 */
export function checkAddress(f: Fields, values: Record<string, string | undefined>): void {
  const problems = addressProblems(values);
  if (problems.has('country')) f.check('country', false, AddressMsg.country);
  if (problems.has('state')) f.check('state', false, stateMessage(values.country ?? ''));
  if (problems.has('zip')) f.check('zip', false, AddressMsg.usZip);
  if (values.country && !problems.has('country')) {
    values.country = addressCode(values.country);
    if (values.state && hasStates(values.country)) values.state = addressCode(values.state);
  }
}
