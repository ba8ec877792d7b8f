import type { IntervalUnit } from '../calendar/interval.js';
import type { ErrorCollector } from '../core/errors.js';
import { Msg } from '../core/rules.js';
import { checkBody } from '../core/schema-check.js';
import type { PlanData } from './repository.js';
import { DEFAULT_PAYMENT_ATTEMPTS, PlanInput } from './schemas.js';

export {
  DEFAULT_PAYMENT_ATTEMPTS,
  MAX_BILLING_CYCLES,
  MAX_PAYMENT_ATTEMPTS,
  unsupportedCurrency,
} from './schemas.js';

function shopIdMatches(value: unknown, shopId: number): boolean {
  return (typeof value === 'string' || typeof value === 'number') && String(value).trim() === String(shopId);
}

const present = (v: unknown) => v !== undefined && v !== null;
const flag = (v: unknown, otherwise: boolean): boolean => (typeof v === 'boolean' ? v : otherwise);
const whole = (v: unknown, otherwise: number): number => (typeof v === 'number' ? v : otherwise);
const member = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * Checks a plan request against PlanInput (decisions.md, Plans) and the shop, and returns the row
 * to store. Field errors go under `prefix` (`['plan']` when the plan is given inside a subscription),
 * so they read `errors.plan.plan.amount`; an unsupported currency always goes to the top-level
 * `errors.base`. Every broken rule is reported; the data is meaningful only when nothing was.
 */
export function validatePlan(
  body: Record<string, unknown>,
  errors: ErrorCollector,
  shop: { id: number; test: boolean },
  prefix: string[] = [],
): PlanData {
  checkBody(PlanInput, body, errors, prefix);
  if (present(body.shop_id) && !shopIdMatches(body.shop_id, shop.id))
    errors.add([...prefix, 'shop_id'], Msg.invalid);
  const regular = member(body.plan) ?? {};
  const trial = member(body.trial);
  const infinite = flag(body.infinite, true);
  return {
    title: typeof body.title === 'string' ? body.title : '',
    currency: typeof body.currency === 'string' ? body.currency : '',
    amount: whole(regular.amount, 0),
    interval: whole(regular.interval, 1),
    interval_unit: (regular.interval_unit as IntervalUnit | undefined) ?? 'month',
    trial_amount: trial ? whole(trial.amount, 0) : null,
    trial_interval: trial ? whole(trial.interval, 1) : null,
    trial_interval_unit: trial ? ((trial.interval_unit as IntervalUnit | undefined) ?? 'month') : null,
    trial_as_first_payment: trial ? flag(trial.as_first_payment, false) : null,
    language: typeof body.language === 'string' && body.language !== '' ? body.language : 'en',
    infinite,
    billing_cycles: infinite ? null : whole(body.billing_cycles, 1),
    number_payment_attempts: whole(body.number_payment_attempts, DEFAULT_PAYMENT_ATTEMPTS),
    // A test shop takes no real money: each of its plans is a test plan, whatever was sent.
    test: shop.test || flag(body.test, false),
  };
}
