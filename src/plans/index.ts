/**
 * The plans feature's face: what other features may use of it. Subscriptions check, find, save or
 * insert (inside their batch) the plan they are created on, with its request and response schemas;
 * billing, checkout and the cabinet read plans and show them as `Plan`. Nothing else of `plans/` is
 * for use outside it (the composition root aside).
 */
export { findPlans, newPlanRow, type PlanData, type PlanRow, planInsert } from './repository.js';
export { PlanInput, PlanSchema } from './schemas.js';
export {
  checkPlanInput,
  findPlanOfShop,
  type Plan,
  type PlanChoice,
  savePlan,
  toPlan,
} from './service.js';
