import { beforeAll, describe, expect, it } from 'vitest';
import type { Ctx } from '../../src/context.js';
import { ErrorCollector, sentence } from '../../src/core/errors.js';
import { checkPlanInput, createPlan, getPlan, listPlans, resolvePlanInput } from '../../src/plans/service.js';
import { type Harness, harness, newShop } from '../harness.js';

let h: Harness;

async function ctxOfNewShop(): Promise<Ctx> {
  const { shop } = await newShop(h);
  return { db: h.db, clock: h.clock, config: h.config, masterKey: h.masterKey, log: h.app.log, shop };
}

const full = {
  title: 'Monthly',
  currency: 'USD',
  plan: { amount: '990', interval: 1, interval_unit: 'month' },
  trial: { amount: 0, interval: 14, interval_unit: 'day' },
};

beforeAll(async () => {
  h = await harness();
});

describe('resolvePlanInput: the plan member of a subscription request', () => {
  it('returns the existing plan for {id} of this shop and adds no error', async () => {
    const ctx = await ctxOfNewShop();
    const existing = await createPlan(ctx, full);
    const errors = new ErrorCollector();
    const plan = await resolvePlanInput(ctx, { id: existing.id }, errors);
    expect(errors.empty).toBe(true);
    expect(plan).toEqual(existing);
  });

  it('adds errors.plan.base for {id} of another shop, exactly as the seed words it', async () => {
    const theirs = await createPlan(await ctxOfNewShop(), full);
    const ctx = await ctxOfNewShop();
    for (const id of [theirs.id, 'pln_unknown', 42]) {
      const errors = new ErrorCollector();
      expect(await resolvePlanInput(ctx, { id }, errors)).toBeUndefined();
      expect(errors.tree).toEqual({ plan: { base: ["plan with this ID doesn't exist for this account"] } });
      expect(sentence(errors.tree)).toBe("Plan with this ID doesn't exist for this account");
    }
  });

  it('ignores the other members when an id is given', async () => {
    const ctx = await ctxOfNewShop();
    const existing = await createPlan(ctx, full);
    const errors = new ErrorCollector();
    const plan = await resolvePlanInput(ctx, { id: existing.id, currency: 'XYZ', title: '' }, errors);
    expect(errors.empty).toBe(true);
    expect(plan?.id).toBe(existing.id);
  });

  it('creates a plan from a full object, inside the given transaction', async () => {
    const ctx = await ctxOfNewShop();
    const errors = new ErrorCollector();
    const plan = await h.db.tx((tx) => resolvePlanInput(ctx, full, errors, tx));
    expect(errors.empty).toBe(true);
    expect(plan).toMatchObject({
      id: expect.stringMatching(/^pln_/),
      title: 'Monthly',
      plan: { amount: 990, interval: 1, interval_unit: 'month' },
      trial: { amount: 0, interval: 14, interval_unit: 'day', as_first_payment: false },
      shop_id: ctx.shop.id,
    });
    expect(await getPlan(ctx, plan!.id)).toEqual(plan);
  });

  it('nests field errors under plan, but puts an unsupported currency in the top-level base', async () => {
    const ctx = await ctxOfNewShop();
    const errors = new ErrorCollector();
    const input = {
      ...full,
      title: '',
      currency: 'XYZ',
      plan: { amount: 0, interval: 1, interval_unit: 'day' },
    };
    expect(await resolvePlanInput(ctx, input, errors)).toBeUndefined();
    expect(errors.tree).toEqual({
      plan: { title: ["can't be blank"], plan: { amount: ['must be greater than 0'] } },
      base: ['Currency XYZ is not supported'],
    });
    expect(sentence(errors.tree)).toBe(
      "Plan title can't be blank, Plan plan amount must be greater than 0, and Currency XYZ is not supported",
    );
    expect(await listPlans(ctx, { limit: 10, startingAfter: undefined })).toEqual([]);
  });

  it('keeps the errors the subscription collected before, and then creates no plan', async () => {
    const ctx = await ctxOfNewShop();
    const errors = new ErrorCollector();
    errors.add('tracking_id', 'is too long (maximum is 255 characters)');
    expect(await resolvePlanInput(ctx, full, errors)).toBeUndefined();
    expect(errors.tree).toEqual({ tracking_id: ['is too long (maximum is 255 characters)'] });
    expect(await listPlans(ctx, { limit: 10, startingAfter: undefined })).toEqual([]);
  });

  it('says plan is blank when absent and must be an object otherwise', async () => {
    const ctx = await ctxOfNewShop();
    for (const [input, msg] of [
      [undefined, "can't be blank"],
      [null, "can't be blank"],
      ['pln_x', 'must be an object'],
      [[full], 'must be an object'],
    ] as const) {
      const errors = new ErrorCollector();
      expect(await resolvePlanInput(ctx, input, errors)).toBeUndefined();
      expect(errors.tree).toEqual({ plan: [msg] });
    }
  });

  it('checkPlanInput validates a new plan without storing it', async () => {
    const ctx = await ctxOfNewShop();
    const errors = new ErrorCollector();
    const choice = await checkPlanInput(ctx, full, errors);
    expect(errors.empty).toBe(true);
    expect(choice).toEqual({
      create: expect.objectContaining({ title: 'Monthly', amount: 990, test: true }),
    });
    expect(await listPlans(ctx, { limit: 10, startingAfter: undefined })).toEqual([]);
  });
});
