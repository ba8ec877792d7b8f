import type { IntervalUnit } from '../calendar/interval.js';
import { isoString } from '../clock.js';
import type { Ctx } from '../context.js';
import { ApiError, ErrorCollector, type ErrorTree } from '../core/errors.js';
import type { ListParams } from '../core/paging.js';
import { Msg } from '../core/rules.js';
import type { Queryable } from '../db/db.js';
import { newId } from '../ids.js';
import { validatePlan } from './input.js';
import { findPlan, insertPlan, listPlanRows, type PlanData, type PlanRow } from './repository.js';

export interface PlanPrice {
  amount: number;
  interval: number;
  interval_unit: IntervalUnit;
}

export interface PlanTrial extends PlanPrice {
  as_first_payment: boolean;
}

/** A plan as the API returns it (also inside a subscription). */
export interface Plan {
  id: string;
  title: string;
  currency: string;
  plan: PlanPrice;
  trial: PlanTrial | null;
  language: string;
  infinite: boolean;
  billing_cycles: number | null;
  number_payment_attempts: number;
  test: boolean;
  shop_id: number;
  created_at: string;
  updated_at: string;
}

export function toPlan(r: PlanRow): Plan {
  const trial =
    r.trial_amount === null || r.trial_interval === null || r.trial_interval_unit === null
      ? null
      : {
          amount: r.trial_amount,
          interval: r.trial_interval,
          interval_unit: r.trial_interval_unit,
          as_first_payment: r.trial_as_first_payment ?? false,
        };
  return {
    id: r.id,
    title: r.title,
    currency: r.currency,
    plan: { amount: r.amount, interval: r.interval, interval_unit: r.interval_unit },
    trial,
    language: r.language,
    infinite: r.infinite,
    billing_cycles: r.billing_cycles,
    number_payment_attempts: r.number_payment_attempts,
    test: r.test,
    shop_id: r.shop_id,
    created_at: isoString(r.created_at),
    updated_at: isoString(r.updated_at),
  };
}

/** The seed's exact wording for `errors.plan.base` when a subscription names an unknown plan id. */
export const PLAN_NOT_FOUND = "plan with this ID doesn't exist for this account";

export async function createPlan(ctx: Ctx, input: Record<string, unknown>, tx?: Queryable): Promise<Plan> {
  const errors = new ErrorCollector();
  const data = validatePlan(input, errors, ctx.shop);
  errors.throwIfAny();
  return savePlan(ctx, data, tx);
}

export async function getPlan(ctx: Ctx, id: string, tx?: Queryable): Promise<Plan> {
  const plan = await findPlanOfShop(ctx, id, tx);
  if (!plan) throw ApiError.notFound();
  return plan;
}

/** The shop's plan with that id, or undefined (another shop's plan is as unknown as a missing one). */
export async function findPlanOfShop(ctx: Ctx, id: string, tx?: Queryable): Promise<Plan | undefined> {
  const row = await findPlan(tx ?? ctx.db, ctx.shop.id, id);
  return row && toPlan(row);
}

export async function listPlans(ctx: Ctx, params: ListParams): Promise<Plan[]> {
  return (await listPlanRows(ctx.db, ctx.shop.id, params)).map(toPlan);
}

/** Stores validated plan data (from `checkPlanInput`) as a new plan of the shop. */
export async function savePlan(ctx: Ctx, data: PlanData, tx?: Queryable): Promise<Plan> {
  const row = await insertPlan(tx ?? ctx.db, ctx.shop.id, newId('pln'), data, ctx.clock.now());
  return toPlan(row);
}

/** A subscription's `plan` member after checking: an existing plan, or valid data for a new one. */
export type PlanChoice = { existing: Plan } | { create: PlanData };

function copyErrors(into: ErrorCollector, tree: ErrorTree, path: string[] = []): void {
  for (const [key, value] of Object.entries(tree)) {
    if (Array.isArray(value)) for (const msg of value) into.add([...path, key], msg);
    else copyErrors(into, value, [...path, key]);
  }
}

/**
 * Checks the `plan` member of a subscription request without writing anything.
 *
 * - `{id}` (other members are then ignored): the shop's plan with that id; an unknown id, or
 *   another shop's, adds `errors.plan.base: ["plan with this ID doesn't exist for this account"]`.
 * - A full plan object: validated like `POST /plans`, with field errors nested under `plan`
 *   (`errors.plan.title`, `errors.plan.plan.amount`, ...), except an unsupported currency, which
 *   goes to the top-level `errors.base` as the seed shows for subscriptions too.
 * - Absent: `errors.plan: ["can't be blank"]`; not an object: `errors.plan: ["must be an object"]`.
 *
 * Returns undefined when the member added any error.
 */
export async function checkPlanInput(
  ctx: Ctx,
  input: unknown,
  errors: ErrorCollector,
  tx?: Queryable,
): Promise<PlanChoice | undefined> {
  if (input === undefined || input === null) {
    errors.add('plan', Msg.blank);
    return undefined;
  }
  if (typeof input !== 'object' || Array.isArray(input)) {
    errors.add('plan', Msg.notObject);
    return undefined;
  }
  const body = input as Record<string, unknown>;
  if (body.id !== undefined && body.id !== null) {
    const existing = typeof body.id === 'string' ? await findPlanOfShop(ctx, body.id, tx) : undefined;
    if (!existing) {
      errors.add(['plan', 'base'], PLAN_NOT_FOUND);
      return undefined;
    }
    return { existing };
  }
  const own = new ErrorCollector();
  const data = validatePlan(body, own, ctx.shop, ['plan']);
  copyErrors(errors, own.tree);
  return own.empty ? { create: data } : undefined;
}

/**
 * `checkPlanInput`, then the plan itself: the existing one, or a new plan stored through `tx`.
 * A new plan is stored only when `errors` holds no error at all (the subscription's own fields
 * included), so a rejected request leaves no plan behind; call it after validating the other
 * fields, and inside the subscription's transaction so a later failure rolls the plan back too.
 */
export async function resolvePlanInput(
  ctx: Ctx,
  input: unknown,
  errors: ErrorCollector,
  tx?: Queryable,
): Promise<Plan | undefined> {
  const choice = await checkPlanInput(ctx, input, errors, tx);
  if (choice === undefined) return undefined;
  if ('existing' in choice) return choice.existing;
  if (!errors.empty) return undefined;
  return savePlan(ctx, choice.create, tx);
}
