import { isIP } from 'node:net';
import { isIsoCurrency, isKnownCurrency } from '../money/currencies.js';
import type { ErrorCollector } from './errors.js';

/** Rules shared by every feature's input validation; messages in the platform's wording. */
export const Msg = {
  blank: "can't be blank",
  invalid: 'is invalid',
  notIncluded: 'is not included in the list',
  tooLong: (max: number) => `is too long (maximum is ${max} characters)`,
  notNumber: 'is not a number',
  notInteger: 'must be an integer',
  greaterThan: (n: number) => `must be greater than ${n}`,
  greaterOrEqual: (n: number) => `must be greater than or equal to ${n}`,
  notBoolean: 'must be true or false',
  notString: 'must be a string',
  notObject: 'must be an object',
  notArray: 'must be an array',
} as const;

export const LANGUAGES = [
  'en',
  'es',
  'tr',
  'de',
  'it',
  'ru',
  'zh',
  'fr',
  'da',
  'sv',
  'no',
  'fi',
  'pl',
  'ja',
  'be',
  'ka',
  'uk',
  'lv',
  'az',
  'ro',
] as const;

const COUNTRIES = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW
  BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI
  FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN
  IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME
  MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF
  PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV
  SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE
  YT ZA ZM ZW`
    .split(/\s+/)
    .filter(Boolean),
);

export const isCountry = (v: string): boolean => COUNTRIES.has(v);
export const isIpAddress = (v: string): boolean => isIP(v) !== 0;
export const isEmail = (v: string): boolean => v.length <= 254 && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(v);

export function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const isPresent = (v: unknown) => v !== undefined && v !== null;

/**
 * Each check reads one field of a loosely typed body, records a message on failure and returns the
 * normalised value (or undefined). Types were already checked by the route schema for HTTP callers;
 * the checks repeat them so a verb called from elsewhere gets the same answers.
 */
export class Fields {
  constructor(
    readonly body: Record<string, unknown>,
    readonly errors: ErrorCollector,
    readonly prefix: string[] = [],
  ) {}

  private fail(field: string, msg: string): undefined {
    this.errors.add([...this.prefix, field], msg);
    return undefined;
  }

  has(field: string): boolean {
    return isPresent(this.body[field]);
  }

  string(field: string, opts: { required?: boolean; max?: number } = {}): string | undefined {
    const v = this.body[field];
    if (!isPresent(v) || v === '') return opts.required ? this.fail(field, Msg.blank) : undefined;
    if (typeof v !== 'string') return this.fail(field, Msg.notString);
    if (opts.required && v.trim() === '') return this.fail(field, Msg.blank);
    if (opts.max !== undefined && v.length > opts.max) return this.fail(field, Msg.tooLong(opts.max));
    return v;
  }

  /**
   * Text, or an integer JSON number taken as its decimal text: shops written in PHP send their order
   * id (a tracking_id) as a number. Fractions, numbers beyond 2^53 (no longer exact) and other
   * types read "must be a string", as any text field.
   */
  textOrInteger(field: string, opts: { max?: number } = {}): string | undefined {
    const v = this.body[field];
    if (typeof v === 'number') return Number.isSafeInteger(v) ? String(v) : this.fail(field, Msg.notString);
    return this.string(field, opts);
  }

  boolean(field: string): boolean | undefined {
    const v = this.body[field];
    if (!isPresent(v)) return undefined;
    if (typeof v !== 'boolean') return this.fail(field, Msg.notBoolean);
    return v;
  }

  /**
   * A whole number given as an integer or a numeric string ("100"); fractions, negatives (unless
   * min allows them) and values beyond 2^53 are refused.
   */
  integer(
    field: string,
    opts: { required?: boolean; min?: number; exclusiveMin?: number } = {},
  ): number | undefined {
    const v = this.body[field];
    if (!isPresent(v) || v === '') return opts.required ? this.fail(field, Msg.blank) : undefined;
    let n: number;
    if (typeof v === 'number') n = v;
    else if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) n = Number(v);
    else return this.fail(field, Msg.notNumber);
    if (!Number.isInteger(n)) return this.fail(field, Msg.notInteger);
    if (!Number.isSafeInteger(n)) return this.fail(field, 'is too large');
    if (opts.exclusiveMin !== undefined && n <= opts.exclusiveMin)
      return this.fail(field, Msg.greaterThan(opts.exclusiveMin));
    if (opts.min !== undefined && n < opts.min) return this.fail(field, Msg.greaterOrEqual(opts.min));
    return n;
  }

  currency(field: string, opts: { required?: boolean; isoOnly?: boolean } = {}): string | undefined {
    const v = this.string(field, opts);
    if (v === undefined) return undefined;
    const ok = opts.isoOnly ? isIsoCurrency(v) : isKnownCurrency(v);
    return ok ? v : this.fail(field, Msg.invalid);
  }

  language(field: string): string | undefined {
    const v = this.string(field);
    if (v === undefined) return undefined;
    return (LANGUAGES as readonly string[]).includes(v) ? v : this.fail(field, Msg.notIncluded);
  }

  oneOf<T extends string>(field: string, allowed: readonly T[]): T | undefined {
    const v = this.string(field);
    if (v === undefined) return undefined;
    return (allowed as readonly string[]).includes(v) ? (v as T) : this.fail(field, Msg.notIncluded);
  }

  url(field: string): string | undefined {
    const v = this.string(field, { max: 2048 });
    if (v === undefined) return undefined;
    return isHttpUrl(v) ? v : this.fail(field, 'must be an absolute http(s) URL');
  }

  object(field: string): Record<string, unknown> | undefined {
    const v = this.body[field];
    if (!isPresent(v)) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) return this.fail(field, Msg.notObject);
    return v as Record<string, unknown>;
  }

  check(field: string, ok: boolean, msg: string = Msg.invalid): boolean {
    if (!ok) this.fail(field, msg);
    return ok;
  }
}
