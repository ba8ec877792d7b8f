import { INTERVAL_UNITS, type IntervalUnit } from '../calendar/interval.js';
import type { ErrorCollector } from '../core/errors.js';
import { Fields, Msg } from '../core/rules.js';
import { isIsoCurrency } from '../money/currencies.js';
import type { PlanData } from './repository.js';

export const DEFAULT_PAYMENT_ATTEMPTS = 3;
export const MAX_PAYMENT_ATTEMPTS = 10;
export const MAX_BILLING_CYCLES = 1_000_000;

/**
 * The longest period a plan (or its trial) may have, per unit: ten years. Longer periods are
 * certainly mistakes, and the bound keeps every later date computation inside Date's range.
 */
const MAX_INTERVAL: Record<IntervalUnit, number> = {
  hour: 87_600,
  day: 3_660,
  week: 522,
  month: 120,
  year: 10,
};

const atMost = (max: number) => `must be less than or equal to ${max}`;

/**
 * The contract puts an invalid plan currency under `errors.base`, not `errors.currency`
 * (api-seed.md, Errors), also when the plan arrives inside a subscription. Only short codes are
 * echoed, so a huge or odd value cannot blow up the message.
 */
export function unsupportedCurrency(code: string): string {
  return /^[A-Za-z0-9]{1,10}$/.test(code) ? `Currency ${code} is not supported` : 'Currency is not supported';
}

/** amount + interval + interval_unit of `plan` or `trial`, with the amount's lower bound. */
function price(f: Fields, minAmount: 0 | 1) {
  const amount =
    minAmount === 1
      ? f.integer('amount', { required: true, exclusiveMin: 0 })
      : f.integer('amount', { required: true, min: 0 });
  const interval = f.integer('interval', { required: true, min: 1 });
  const unit =
    f.string('interval_unit', { required: true }) === undefined
      ? undefined
      : f.oneOf('interval_unit', INTERVAL_UNITS);
  if (interval !== undefined) {
    const max = unit === undefined ? MAX_INTERVAL.hour : MAX_INTERVAL[unit];
    f.check('interval', interval <= max, atMost(max));
  }
  return { amount: amount ?? 0, interval: interval ?? 1, interval_unit: unit ?? 'month' };
}

/** A nested object member: "can't be blank" when required and absent, "must be an object" when not one. */
function member(f: Fields, name: string, required: boolean): Record<string, unknown> | undefined {
  if (!f.has(name)) {
    if (required) f.check(name, false, Msg.blank);
    return undefined;
  }
  return f.object(name);
}

function shopIdMatches(value: unknown, shopId: number): boolean {
  return (typeof value === 'string' || typeof value === 'number') && String(value).trim() === String(shopId);
}

/**
 * Validates a plan request (decisions.md, Plans) and returns the row to store. Field errors go
 * under `prefix` (`['plan']` when the plan is given inside a subscription), so they read
 * `errors.plan.plan.amount`; an unsupported currency always goes to the top-level `errors.base`.
 * Every broken rule is reported; the returned data is meaningful only when nothing was reported.
 */
export function validatePlan(
  body: Record<string, unknown>,
  errors: ErrorCollector,
  shop: { id: number; test: boolean },
  prefix: string[] = [],
): PlanData {
  const f = new Fields(body, errors, prefix);
  const title = f.string('title', { required: true, max: 255 });
  const currency = f.string('currency', { required: true });
  if (currency !== undefined && !isIsoCurrency(currency)) errors.add('base', unsupportedCurrency(currency));

  const regularBody = member(f, 'plan', true);
  // An absent or malformed `plan` is one error; its members are checked only when it is an object.
  const regular = regularBody
    ? price(new Fields(regularBody, errors, [...prefix, 'plan']), 1)
    : { amount: 0, interval: 1, interval_unit: 'month' as const };
  const trialBody = member(f, 'trial', false);
  let trial: (ReturnType<typeof price> & { as_first_payment: boolean }) | undefined;
  if (trialBody !== undefined) {
    const tf = new Fields(trialBody, errors, [...prefix, 'trial']);
    trial = { ...price(tf, 0), as_first_payment: tf.boolean('as_first_payment') ?? false };
  }

  const language = f.language('language') ?? 'en';
  const infinite = f.boolean('infinite') ?? true;
  let billingCycles: number | null = null;
  // Ignored when the plan bills forever: the platform's clients send it anyway.
  if (!infinite) {
    billingCycles = f.integer('billing_cycles', { required: true, min: 1 }) ?? null;
    if (billingCycles !== null)
      f.check('billing_cycles', billingCycles <= MAX_BILLING_CYCLES, atMost(MAX_BILLING_CYCLES));
  }
  const attempts = f.integer('number_payment_attempts', { min: 1 }) ?? DEFAULT_PAYMENT_ATTEMPTS;
  f.check('number_payment_attempts', attempts <= MAX_PAYMENT_ATTEMPTS, atMost(MAX_PAYMENT_ATTEMPTS));
  const test = f.boolean('test') ?? shop.test;
  if (f.has('shop_id')) f.check('shop_id', shopIdMatches(body.shop_id, shop.id));

  return {
    title: title ?? '',
    currency: currency ?? '',
    amount: regular.amount,
    interval: regular.interval,
    interval_unit: regular.interval_unit,
    trial_amount: trial?.amount ?? null,
    trial_interval: trial?.interval ?? null,
    trial_interval_unit: trial?.interval_unit ?? null,
    trial_as_first_payment: trial?.as_first_payment ?? null,
    language,
    infinite,
    billing_cycles: billingCycles,
    number_payment_attempts: attempts,
    test,
  };
}
