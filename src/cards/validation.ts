import { type TSchema, Type } from 'typebox';
import type { ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';
import { addFormat, checkBody, choice, type RuleCheck, withRules } from '../core/schema-check.js';
import { MESSAGES } from '../core/schema-errors.js';
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

addFormat('luhn', (v) => luhnValid(v.replace(/\s+/g, '')));

/** One text for whatever rule of a field is broken. */
const readsAs = (message: string) => ({
  [MESSAGES]: { anyOf: message, type: message, pattern: message, minimum: message, maximum: message },
});

/** The card's fields, each stating its own rule; which are required depends on the card's shape. */
export const CardField = {
  number: Type.String({
    pattern: '^\\s*(?:\\d\\s*){12,19}$',
    format: 'luhn',
    description: '12 to 19 digits (spaces are ignored), Luhn-valid',
    [MESSAGES]: { pattern: CardMsg.digits, format: CardMsg.luhn },
  }),
  verification_value: Type.Union(
    [Type.String({ pattern: '^\\d{3,4}$' }), Type.Integer({ minimum: 100, maximum: 9999 })],
    { description: 'CVC: 3 or 4 digits; never stored', ...readsAs(CardMsg.cvc) },
  ),
  holder: Type.String({ maxLength: HOLDER_MAX, pattern: '\\S', [MESSAGES]: { pattern: Msg.blank } }),
  exp_month: Type.Union(
    [Type.String({ pattern: '^(0[1-9]|1[0-2])$' }), Type.Integer({ minimum: 1, maximum: 12 })],
    { description: 'Two digits, 01 to 12 (or the number 1 to 12)', ...readsAs(CardMsg.month) },
  ),
  exp_year: Type.Union(
    [Type.String({ pattern: '^\\d{4}$' }), Type.Integer({ minimum: 1000, maximum: 9999 })],
    { description: 'Four digits', ...readsAs(CardMsg.year) },
  ),
  token: Type.String({ maxLength: 255 }),
};

const blank = (v: unknown) => v === undefined || v === null || v === '';

/** The CVC is required with a full card number when the verb charges it (a payment, a subscription). */
function cvcRequired(card: Record<string, unknown>, check: RuleCheck): void {
  if (blank(card.verification_value) && check.passed('verification_value'))
    check.add('verification_value', Msg.blank);
}

/** A card given by its token: a non-empty `token`. */
export const GIVEN_BY_TOKEN = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1 } },
};

/**
 * A card: in full, or by its token (with verification_value when the cardholder gave it). `extra`
 * are members the caller's protocol adds to either shape.
 */
export function cardSchema(opts: {
  requireCvc: boolean;
  extra?: Record<string, TSchema>;
  /** Members a card given by its token may change (tokenization updates holder and expiry). */
  byToken?: Record<string, TSchema>;
}) {
  const { number, verification_value, holder, exp_month, exp_year, token } = CardField;
  const extra = opts.extra ?? {};
  const full = Type.Object({
    number,
    verification_value: Type.Optional(verification_value),
    holder,
    exp_month,
    exp_year,
    token: Type.Optional(Type.String()),
    ...extra,
  });
  return choice(
    { not: GIVEN_BY_TOKEN },
    opts.requireCvc ? withRules(full, cvcRequired) : full,
    Type.Object({
      token,
      verification_value: Type.Optional(verification_value),
      ...opts.byToken,
      ...extra,
    }),
    { description: 'The full card, or its token (with verification_value when the cardholder gave it)' },
  );
}

/**
 * New holder or expiry of a stored card (its number never changes); a CVC sent along is checked for
 * form and forgotten. Each is optional: what is not sent stays.
 */
export const CardChanges = Type.Object({
  verification_value: Type.Optional(CardField.verification_value),
  holder: Type.Optional(CardField.holder),
  exp_month: Type.Optional(CardField.exp_month),
  exp_year: Type.Optional(CardField.exp_year),
});

/** Tokenization: a full card for a new token, or a token with new holder or expiry. */
export const TokenizeCard = cardSchema({ requireCvc: false, byToken: CardChanges.properties });

const CardWithCvc = cardSchema({ requireCvc: true });
const CardWithoutCvc = cardSchema({ requireCvc: false });

/** The text of a valid CVC (a JSON number is its digits). */
export const cvcText = (v: unknown): string | undefined => (blank(v) ? undefined : String(v));

/** A card's expiry month and year when both keep their own rules (whatever else is wrong). */
function writtenExpiry(card: Record<string, unknown>): { month: number; year: number } | undefined {
  const { exp_month: m, exp_year: y } = card;
  const month =
    (typeof m === 'string' && /^(0[1-9]|1[0-2])$/.test(m)) ||
    (Number.isInteger(m) && (m as number) >= 1 && (m as number) <= 12)
      ? Number(m)
      : undefined;
  const year =
    (typeof y === 'string' && /^\d{4}$/.test(y)) ||
    (Number.isInteger(y) && (y as number) >= 1000 && (y as number) <= 9999)
      ? Number(y)
      : undefined;
  return month !== undefined && year !== undefined ? { month, year } : undefined;
}

/**
 * Validates a card object found at `prefix` of a request (`credit_card` on the gateway, `card` in a
 * subscription) against the card's schema (cardSchema), then its expiry against the shop's clock.
 * Every broken rule is recorded under the prefix (`credit_card.number`, `card.exp_month`, ...);
 * undefined when any was broken.
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
  const valid = checkBody(rules.requireCvc ? CardWithCvc : CardWithoutCvc, value, errors, prefix);
  const card = value as Record<string, unknown>;
  if (!valid) {
    // Every problem at once: an expiry well written but passed is reported beside a mistyped number.
    const expiry = typeof card === 'object' && !('token' in card) ? writtenExpiry(card) : undefined;
    if (expiry && isExpired(expiry.month, expiry.year, rules.now))
      errors.add([...prefix, 'base'], rules.expiredMessage ?? CardMsg.expired(expiry.month, expiry.year));
    return undefined;
  }
  const cvc = cvcText(card.verification_value);
  if (typeof card.token === 'string' && card.token !== '') return { kind: 'token', token: card.token, cvc };
  const expMonth = Number(card.exp_month);
  const expYear = Number(card.exp_year);
  if (isExpired(expMonth, expYear, rules.now)) {
    errors.add([...prefix, 'base'], rules.expiredMessage ?? CardMsg.expired(expMonth, expYear));
    return undefined;
  }
  return {
    kind: 'number',
    number: (card.number as string).replace(/\s+/g, ''),
    holder: card.holder as string,
    expMonth,
    expYear,
    cvc,
  };
}
