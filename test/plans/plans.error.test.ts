import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, harness, newShop } from '../harness.js';

let api: Client;

beforeAll(async () => {
  const h = await harness();
  api = client(h, await newShop(h));
});

const valid = {
  title: 'Basic',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
};
const withPlan = (plan: Record<string, unknown>) => ({ ...valid, plan: { ...valid.plan, ...plan } });
const trial = { amount: 0, interval: 7, interval_unit: 'day' };

describe('plans: validation', () => {
  it('reports every missing required field at once', async () => {
    const res = await api.post('/plans', {});
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: "Title can't be blank, Currency can't be blank, and Plan can't be blank",
      errors: { title: ["can't be blank"], currency: ["can't be blank"], plan: ["can't be blank"] },
    });
  });

  it('requires the members of plan, nested under plan', async () => {
    const res = await api.post('/plans', { ...valid, plan: {} });
    expect(res.body).toEqual({
      message:
        "Plan amount can't be blank, Plan interval can't be blank, and Plan interval unit can't be blank",
      errors: {
        plan: { amount: ["can't be blank"], interval: ["can't be blank"], interval_unit: ["can't be blank"] },
      },
    });
  });

  it('rejects an empty or blank title', async () => {
    for (const title of ['', '   ']) {
      const res = await api.post('/plans', { ...valid, title });
      expect(res.body).toEqual({ message: "Title can't be blank", errors: { title: ["can't be blank"] } });
    }
  });

  it.each(['XYZ', 'usd', 'BTC', 'USDT', 'EURO'])(
    'puts an unsupported currency %s under errors.base',
    async (c) => {
      const res = await api.post('/plans', { ...valid, currency: c });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        message: `Currency ${c} is not supported`,
        errors: { base: [`Currency ${c} is not supported`] },
      });
    },
  );

  it('does not echo a long or odd currency value', async () => {
    const res = await api.post('/plans', { ...valid, currency: `<b>${'X'.repeat(500)}` });
    expect(res.body).toEqual({
      message: 'Currency is not supported',
      errors: { base: ['Currency is not supported'] },
    });
  });

  it.each([0, -5, '0', '-1'])('rejects plan amount %s with a nested error', async (amount) => {
    const res = await api.post('/plans', withPlan({ amount }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'Plan amount must be greater than 0',
      errors: { plan: { amount: ['must be greater than 0'] } },
    });
  });

  it.each([
    [12.5, 'must be an integer'],
    ['12.50', 'must be an integer'],
    ['ten', 'is not a number'],
    [true, 'is not a number'],
    [2 ** 53, 'is too large'],
  ])('rejects plan amount %s: %s', async (amount, msg) => {
    const res = await api.post('/plans', withPlan({ amount }));
    expect(res.body.errors).toEqual({ plan: { amount: [msg] } });
  });

  it.each([
    [0, 'must be greater than or equal to 1'],
    [1.5, 'must be an integer'],
    ['x', 'is not a number'],
  ])('rejects plan interval %s', async (interval, msg) => {
    const res = await api.post('/plans', withPlan({ interval }));
    expect(res.body.errors).toEqual({ plan: { interval: [msg] } });
  });

  it('limits a period to ten years', async () => {
    const res = await api.post('/plans', withPlan({ interval: 11, interval_unit: 'year' }));
    expect(res.body).toEqual({
      message: 'Plan interval must be less than or equal to 10',
      errors: { plan: { interval: ['must be less than or equal to 10'] } },
    });
    expect((await api.post('/plans', withPlan({ interval: 121, interval_unit: 'month' }))).status).toBe(422);
    expect((await api.post('/plans', withPlan({ interval: 120, interval_unit: 'month' }))).status).toBe(201);
    expect(
      (await api.post('/plans', withPlan({ interval: 2 ** 40, interval_unit: 'x' }))).body.errors,
    ).toEqual({
      plan: {
        interval: ['must be less than or equal to 87600'],
        interval_unit: ['is not included in the list'],
      },
    });
  });

  it.each(['minute', 'Month', 'days'])('rejects interval_unit %s', async (unit) => {
    const res = await api.post('/plans', withPlan({ interval_unit: unit }));
    expect(res.body).toEqual({
      message: 'Plan interval unit is not included in the list',
      errors: { plan: { interval_unit: ['is not included in the list'] } },
    });
  });

  it('rejects a plan member that is not an object', async () => {
    const res = await api.post('/plans', { ...valid, plan: 'monthly' });
    expect(res.body).toEqual({ message: 'Plan must be an object', errors: { plan: ['must be an object'] } });
  });

  it('validates the trial with errors nested under trial; a trial amount may be 0 but not negative', async () => {
    const res = await api.post('/plans', {
      ...valid,
      trial: { amount: -1, interval: 0, interval_unit: 'fortnight', as_first_payment: 'yes' },
    });
    expect(res.body).toEqual({
      message:
        'Trial amount must be greater than or equal to 0, Trial interval must be greater than or equal to 1, ' +
        'Trial interval unit is not included in the list, and Trial as first payment must be true or false',
      errors: {
        trial: {
          amount: ['must be greater than or equal to 0'],
          interval: ['must be greater than or equal to 1'],
          interval_unit: ['is not included in the list'],
          as_first_payment: ['must be true or false'],
        },
      },
    });
  });

  it('requires amount, interval and interval_unit of a given trial', async () => {
    const res = await api.post('/plans', { ...valid, trial: { as_first_payment: true } });
    expect(res.body.errors).toEqual({
      trial: { amount: ["can't be blank"], interval: ["can't be blank"], interval_unit: ["can't be blank"] },
    });
    const notObject = await api.post('/plans', { ...valid, trial: [trial] });
    expect(notObject.body.errors).toEqual({ trial: ['must be an object'] });
  });

  it.each(['xx', 'EN', 'english'])('rejects language %s', async (language) => {
    const res = await api.post('/plans', { ...valid, language });
    expect(res.body).toEqual({
      message: 'Language is not included in the list',
      errors: { language: ['is not included in the list'] },
    });
  });

  it('requires billing_cycles when infinite is false', async () => {
    const res = await api.post('/plans', { ...valid, infinite: false });
    expect(res.body).toEqual({
      message: "Billing cycles can't be blank",
      errors: { billing_cycles: ["can't be blank"] },
    });
  });

  it.each([
    [0, 'must be greater than or equal to 1'],
    [2.5, 'must be an integer'],
    [1_000_001, 'must be less than or equal to 1000000'],
  ])('rejects billing_cycles %s of a finite plan', async (billing_cycles, msg) => {
    const res = await api.post('/plans', { ...valid, infinite: false, billing_cycles });
    expect(res.body.errors).toEqual({ billing_cycles: [msg] });
  });

  it.each([
    [0, 'must be greater than or equal to 1'],
    [11, 'must be less than or equal to 10'],
    ['3.5', 'must be an integer'],
  ])('rejects number_payment_attempts %s', async (number_payment_attempts, msg) => {
    const res = await api.post('/plans', { ...valid, number_payment_attempts });
    expect(res.body.errors).toEqual({ number_payment_attempts: [msg] });
  });

  it('rejects non-boolean infinite and test, and a non-string title', async () => {
    const res = await api.post('/plans', { ...valid, infinite: 'false', test: 1, title: 42 });
    expect(res.body.errors).toEqual({
      title: ['must be a string'],
      infinite: ['must be true or false'],
      test: ['must be true or false'],
    });
  });

  it('rejects a body that is not an object', async () => {
    const res = await api.post('/plans', '[1,2]');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ base: ['Request body must be a JSON object'] });
  });

  it('answers 404 for an unknown plan', async () => {
    const res = await api.get('/plans/pln_doesnotexist');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
  });

  it.each(['0', '101', 'abc', '-1'])('rejects limit=%s', async (limit) => {
    const res = await api.get(`/plans?limit=${limit}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ limit: ['must be a whole number from 1 to 100'] });
  });

  it('rejects an unknown starting_after cursor', async () => {
    const res = await api.get('/plans?starting_after=pln_unknown');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ starting_after: ['does not name an object of this list'] });
  });
});
