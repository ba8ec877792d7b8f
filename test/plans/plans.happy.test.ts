import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { expectNewestFirstPages } from '../lists.js';

let h: Harness;
let me: TestShop;
let api: Client;

beforeAll(async () => {
  h = await harness();
  me = await newShop(h);
  api = client(h, me);
});

const minimal = {
  title: 'Basic',
  currency: 'EUR',
  plan: { amount: 1999, interval: 1, interval_unit: 'month' },
};

describe('plans: happy path', () => {
  it('creates a plan with defaults and returns every field', async () => {
    const res = await api.post('/plans', minimal);
    expect(res.status).toBe(201);
    const now = h.clock.now().toISOString();
    expect(res.body).toEqual({
      id: expect.stringMatching(/^pln_[0-9A-Za-z]{24}$/),
      title: 'Basic',
      currency: 'EUR',
      plan: { amount: 1999, interval: 1, interval_unit: 'month' },
      trial: null,
      language: 'en',
      infinite: true,
      billing_cycles: null,
      number_payment_attempts: 3,
      test: true,
      shop_id: me.shop.id,
      created_at: now,
      updated_at: now,
    });
  });

  it('creates a plan with every field given', async () => {
    // A live shop: a test shop's plans are always test plans (test/fidelity/test-mode.test.ts).
    const liveShop = await newShop(h, { test: false });
    const res = await client(h, liveShop).post('/plans', {
      title: 'Gold',
      currency: 'JPY',
      plan: { amount: '5000', interval: 2, interval_unit: 'week' },
      trial: { amount: 100, interval: 3, interval_unit: 'day', as_first_payment: true },
      language: 'ru',
      infinite: false,
      billing_cycles: 12,
      number_payment_attempts: 10,
      test: false,
      shop_id: String(liveShop.shop.id),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      title: 'Gold',
      currency: 'JPY',
      plan: { amount: 5000, interval: 2, interval_unit: 'week' },
      trial: { amount: 100, interval: 3, interval_unit: 'day', as_first_payment: true },
      language: 'ru',
      infinite: false,
      billing_cycles: 12,
      number_payment_attempts: 10,
      test: false,
      shop_id: liveShop.shop.id,
    });
  });

  it('returns numeric-string amounts as integers, in the plan and in the trial', async () => {
    const res = await api.post('/plans', {
      ...minimal,
      plan: { amount: '1500', interval: '1', interval_unit: 'day' },
      trial: { amount: '0', interval: 7, interval_unit: 'day' },
    });
    expect(res.status).toBe(201);
    expect(res.body.plan).toEqual({ amount: 1500, interval: 1, interval_unit: 'day' });
    expect(res.body.trial).toEqual({ amount: 0, interval: 7, interval_unit: 'day', as_first_payment: false });
  });

  it('accepts a free trial (amount 0) and every interval unit', async () => {
    for (const unit of ['hour', 'day', 'week', 'month', 'year']) {
      const res = await api.post('/plans', {
        ...minimal,
        plan: { amount: 1, interval: 1, interval_unit: unit },
        trial: { amount: 0, interval: 1, interval_unit: unit, as_first_payment: false },
      });
      expect(res.status, unit).toBe(201);
      expect(res.body.plan.interval_unit).toBe(unit);
      expect(res.body.trial.interval_unit).toBe(unit);
    }
  });

  it('ignores billing_cycles when the plan is infinite, and returns null', async () => {
    const res = await api.post('/plans', { ...minimal, infinite: true, billing_cycles: 'nonsense' });
    expect(res.status).toBe(201);
    expect(res.body.billing_cycles).toBeNull();
    const also = await api.post('/plans', { ...minimal, billing_cycles: 6 });
    expect(also.body).toMatchObject({ infinite: true, billing_cycles: null });
  });

  it("takes the shop's test mode as the default for test", async () => {
    const live = client(h, await newShop(h, { test: false }));
    const res = await live.post('/plans', minimal);
    expect(res.status).toBe(201);
    expect(res.body.test).toBe(false);
    const explicit = await live.post('/plans', { ...minimal, test: true });
    expect(explicit.body.test).toBe(true);
  });

  it('accepts shop_id given as the number of the authenticated shop', async () => {
    const res = await api.post('/plans', { ...minimal, shop_id: me.shop.id });
    expect(res.status).toBe(201);
    expect(res.body.shop_id).toBe(me.shop.id);
  });

  it('ignores unknown fields and treats a null trial as no trial', async () => {
    const res = await api.post('/plans', { ...minimal, trial: null, colour: 'blue' });
    expect(res.status).toBe(201);
    expect(res.body.trial).toBeNull();
    expect(res.body).not.toHaveProperty('colour');
  });

  it('reads a plan back', async () => {
    const created = await api.post('/plans', {
      ...minimal,
      trial: { amount: 0, interval: 14, interval_unit: 'day' },
    });
    const res = await api.get(`/plans/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it('lists plans newest first and pages with limit, starting_after and a Link header', async () => {
    const own = client(h, await newShop(h));
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await own.post('/plans', { ...minimal, title: `P${i}` })).body.id);
    await expectNewestFirstPages(own, '/plans', ids);
  });

  it('lists nothing for a shop without plans', async () => {
    const empty = client(h, await newShop(h));
    const res = await empty.get('/plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('replays the first response for a retry with the same Idempotency-Key', async () => {
    const own = client(h, await newShop(h));
    const key = { 'idempotency-key': 'plan-create-1' };
    const first = await own.post('/plans', minimal, key);
    const again = await own.post('/plans', minimal, key);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await own.get('/plans')).body).toHaveLength(1);

    const other = await own.post('/plans', { ...minimal, title: 'Different' }, key);
    expect(other.status).toBe(422);
    expect(other.body.errors.idempotency_key).toBeDefined();
  });
});
