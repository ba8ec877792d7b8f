import type { ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';
import { luhnValid } from './brand.js';

/** Messages of the card rules (decisions.md "Cards and the sandbox gateway"). */
export const CardMsg = {
  digits: 'must be 12 to 19 digits',
  luhn: 'is not a card number',
  cvc: 'must be 3 or 4 digits',
  month: 'must be two digits from 01 to 12',
  year: 'must be four digits',
  expired: (month: number, year: number) =>
    `card has expired (valid through ${String(month).padStart(2, '0')}/${year})`,
  /** The same rule in the platform's words, which the gateway's clients expect. */
  dateExpired: 'Date is expired',
  unknownToken: 'does not exist',
} as const;

export const HOLDER_MAX = 32;

/** Card data given in full. */
export interface NumberCard {
  kind: 'number';
  number: string;
  holder: string;
  expMonth: number;
  expYear: number;
  /** Only ever passed on to the acquirer's decision; never stored. */
  cvc: string | undefined;
}

/** A card given by its token; the CVC may accompany it. */
export interface TokenCard {
  kind: 'token';
  token: string;
  cvc: string | undefined;
}

export type CardInput = NumberCard | TokenCard;

export interface CardRules {
  /** Cards are valid through the end of their expiry month as of this instant (the shop's clock). */
  now: Date;
  /** A payment needs the CVC with a full card number; tokenization does not. */
  requireCvc: boolean;
  /** How an expired card is reported; by default with the month it was valid through. */
  expiredMessage?: string;
}

/** Whether a card valid through month/year has expired at `now` (UTC). */
export function isExpired(expMonth: number, expYear: number, now: Date): boolean {
  return now.getTime() >= Date.UTC(expYear, expMonth, 1);
}

/** Card readers in one place, so the gateway, tokenization and subscriptions word them alike. */
export class CardFields {
  readonly f: Fields;
  constructor(
    body: Record<string, unknown>,
    readonly errors: ErrorCollector,
    readonly prefix: string[],
  ) {
    this.f = new Fields(body, errors, prefix);
  }

  private fail(field: string, msg: string): undefined {
    this.errors.add([...this.prefix, field], msg);
    return undefined;
  }

  number(): string | undefined {
    const raw = this.f.string('number', { required: true });
    if (raw === undefined) return undefined;
    // Spaces are how people write card numbers; they carry no meaning.
    const number = raw.replace(/\s+/g, '');
    if (!/^\d{12,19}$/.test(number)) return this.fail('number', CardMsg.digits);
    if (!luhnValid(number)) return this.fail('number', CardMsg.luhn);
    return number;
  }

  cvc(required: boolean): string | undefined {
    const v = this.f.body.verification_value;
    if (v === undefined || v === null || v === '')
      return required ? this.fail('verification_value', Msg.blank) : undefined;
    const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
    if (typeof text !== 'string' || !/^\d{3,4}$/.test(text))
      return this.fail('verification_value', CardMsg.cvc);
    return text;
  }

  holder(required: boolean): string | undefined {
    return this.f.string('holder', { required, max: HOLDER_MAX });
  }

  /** "01".."12"; a JSON integer 1..12 is the same month written without its leading zero. */
  expMonth(required: boolean): number | undefined {
    const v = this.f.body.exp_month;
    if (v === undefined || v === null || v === '')
      return required ? this.fail('exp_month', Msg.blank) : undefined;
    if (typeof v === 'string' && /^\d{2}$/.test(v) && Number(v) >= 1 && Number(v) <= 12) return Number(v);
    if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 12) return v;
    return this.fail('exp_month', CardMsg.month);
  }

  expYear(required: boolean): number | undefined {
    const v = this.f.body.exp_year;
    if (v === undefined || v === null || v === '')
      return required ? this.fail('exp_year', Msg.blank) : undefined;
    const text = typeof v === 'number' && Number.isInteger(v) ? String(v) : v;
    if (typeof text === 'string' && /^\d{4}$/.test(text)) return Number(text);
    return this.fail('exp_year', CardMsg.year);
  }

  token(): string | undefined {
    return this.f.string('token', { max: 255 });
  }

  checkNotExpired(
    expMonth: number,
    expYear: number,
    now: Date,
    message = CardMsg.expired(expMonth, expYear),
  ): boolean {
    if (!isExpired(expMonth, expYear, now)) return true;
    this.errors.add([...this.prefix, 'base'], message);
    return false;
  }
}

/**
 * Validates a card object found at `prefix` of a request (`credit_card` on the gateway, `card` in a
 * subscription): either `{token, verification_value?}` or the full card. Every broken rule is recorded
 * under the prefix (`credit_card.number`, `card.exp_month`, ...); undefined when any was broken.
 */
export function validateCardInput(
  value: unknown,
  errors: ErrorCollector,
  prefix: string[],
  rules: CardRules,
): CardInput | undefined {
  if (value === undefined || value === null) {
    errors.add(prefix, Msg.blank);
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.add(prefix, Msg.notObject);
    return undefined;
  }
  const before = JSON.stringify(errors.tree);
  const c = new CardFields(value as Record<string, unknown>, errors, prefix);
  const token = c.token();
  if (token !== undefined) {
    const cvc = c.cvc(false);
    return JSON.stringify(errors.tree) === before ? { kind: 'token', token, cvc } : undefined;
  }
  const number = c.number();
  const cvc = c.cvc(rules.requireCvc);
  const holder = c.holder(true);
  const expMonth = c.expMonth(true);
  const expYear = c.expYear(true);
  if (expMonth !== undefined && expYear !== undefined)
    c.checkNotExpired(expMonth, expYear, rules.now, rules.expiredMessage);
  if (JSON.stringify(errors.tree) !== before) return undefined;
  return {
    kind: 'number',
    number: number as string,
    holder: holder as string,
    expMonth: expMonth as number,
    expYear: expYear as number,
    cvc,
  };
}
