import { Type } from 'typebox';
import { INTERVAL_UNITS, type IntervalUnit } from '../calendar/interval.js';
import { LANGUAGES } from '../core/rules.js';
import { enforced, type RuleCheck, withRules } from '../core/schema-check.js';
import { Nullable, Text, WholeNumber } from '../http/schemas.js';
import { isIsoCurrency } from '../money/currencies.js';

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

/**
 * The contract puts an invalid plan currency under `errors.base`, not `errors.currency`
 * (api-seed.md, Errors), also when the plan arrives inside a subscription. Only short codes are
 * echoed, so a huge or odd value cannot blow up the message.
 */
export function unsupportedCurrency(code: string): string {
  return /^[A-Za-z0-9]{1,10}$/.test(code) ? `Currency ${code} is not supported` : 'Currency is not supported';
}

/**
 * Plan schemas, apart from the routes so a subscription's schemas can embed them. They validate
 * `POST /plans`; the rules that read two fields at once are attached beside them.
 */

const Unit = Type.Enum(INTERVAL_UNITS, { type: 'string', description: 'hour, day, week, month or year' });

/** A period is at most ten years in its unit (an hour's bound when the unit is not valid). */
function intervalWithinTenYears(price: Record<string, unknown>, check: RuleCheck): void {
  const { interval, interval_unit: unit } = price;
  if (!check.passed('interval') || typeof interval !== 'number') return;
  const max = check.passed('interval_unit') ? MAX_INTERVAL[unit as IntervalUnit] : MAX_INTERVAL.hour;
  if (interval > max) check.add('interval', `must be less than or equal to ${max}`);
}

const price = (minAmount: 0 | 1) => ({
  amount: WholeNumber({
    ...(minAmount === 1 ? { exclusiveMinimum: 0 } : { minimum: 0 }),
    description: 'Minor units; a numeric string is accepted and returned as an integer',
  }),
  interval: WholeNumber({ minimum: 1, description: 'At most ten years in interval_unit' }),
  interval_unit: Unit,
});

const BillingCycles = WholeNumber({ minimum: 1, maximum: MAX_BILLING_CYCLES });

export const PlanInput = enforced(
  withRules(
    Type.Object({
      title: Text({ maxLength: 255 }),
      currency: Text({
        description: 'ISO 4217 alpha-3 code (no crypto codes); errors.base names it when not',
      }),
      plan: withRules(Type.Object(price(1)), intervalWithinTenYears),
      trial: Type.Optional(
        Nullable(
          withRules(
            Type.Object({
              ...price(0),
              as_first_payment: Type.Optional(Nullable(Type.Boolean({ default: false }))),
            }),
            intervalWithinTenYears,
          ),
        ),
      ),
      language: Type.Optional(Nullable(Type.Enum(LANGUAGES, { type: 'string', default: 'en' }))),
      infinite: Type.Optional(Nullable(Type.Boolean({ default: true }))),
      billing_cycles: Type.Optional(
        Type.Unknown({
          description: `Required when infinite is false: a whole number from 1 to ${MAX_BILLING_CYCLES}; ignored otherwise`,
        }),
      ),
      number_payment_attempts: Type.Optional(
        Nullable(
          WholeNumber({ minimum: 1, maximum: MAX_PAYMENT_ATTEMPTS, default: DEFAULT_PAYMENT_ATTEMPTS }),
        ),
      ),
      test: Type.Optional(
        Nullable(
          Type.Boolean({ description: "Always true for a test shop's plans; otherwise default false" }),
        ),
      ),
      shop_id: Type.Optional(
        Nullable(
          Type.Union([Type.Integer(), Type.String()], { description: 'Must be the authenticated shop' }),
        ),
      ),
    }),
    (plan, check) => {
      const { currency } = plan;
      if (check.passed('currency') && typeof currency === 'string' && !isIsoCurrency(currency))
        check.addBase(unsupportedCurrency(currency), 'currency');
      // Ignored when the plan bills forever: the platform's clients send it anyway.
      if (plan.infinite === false) check.against('billing_cycles', BillingCycles, true);
    },
  ),
);

const Price = Type.Object({ amount: Type.Integer(), interval: Type.Integer(), interval_unit: Type.String() });

export const PlanSchema = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    currency: Type.String(),
    plan: Price,
    trial: Nullable(
      Type.Object({
        amount: Type.Integer(),
        interval: Type.Integer(),
        interval_unit: Type.String(),
        as_first_payment: Type.Boolean(),
      }),
    ),
    language: Type.String(),
    infinite: Type.Boolean(),
    billing_cycles: Nullable(Type.Integer()),
    number_payment_attempts: Type.Integer(),
    test: Type.Boolean(),
    shop_id: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Plan' },
);
