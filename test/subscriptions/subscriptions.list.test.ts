import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_PUBLIC_URL } from '../harness.js';
import { expectNewestFirstPages } from '../lists.js';
import { card, cardBody, monthly, type SubShop, subShop } from './helpers.js';

let s: SubShop;
const ids = (body: { id: string }[]) => body.map((x) => x.id);

beforeAll(async () => {
  s = await subShop();
});

describe('subscriptions: list', () => {
  it('lists newest first and pages with limit, starting_after and a Link header', async () => {
    const own = await subShop();
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await own.api.post('/subscriptions', { plan: monthly() })).body.id);
    await expectNewestFirstPages(own.api, '/subscriptions', made);
  });

  it('filters by tracking_id, first match first, and pages in that order', async () => {
    const a = await s.api.post('/subscriptions', { plan: monthly(), tracking_id: 'dup-order' });
    await s.api.post('/subscriptions', { plan: monthly(), tracking_id: 'other-order' });
    const b = await s.api.post('/subscriptions', cardBody({ tracking_id: 'dup-order' }));
    const c = await s.api.post('/subscriptions', { plan: monthly(), tracking_id: 'dup-order' });
    const res = await s.api.get('/subscriptions?tracking_id=dup-order');
    expect(ids(res.body)).toEqual([a.body.id, b.body.id, c.body.id]);
    const page1 = await s.api.get('/subscriptions?tracking_id=dup-order&limit=1');
    expect(ids(page1.body)).toEqual([a.body.id]);
    expect(page1.headers.link).toBe(
      `<${TEST_PUBLIC_URL}/subscriptions?tracking_id=dup-order&limit=1&starting_after=${a.body.id}>; rel="next"`,
    );
    const page2 = await s.api.get(`/subscriptions?tracking_id=dup-order&limit=1&starting_after=${a.body.id}`);
    expect(ids(page2.body)).toEqual([b.body.id]);
    expect((await s.api.get('/subscriptions?tracking_id=no-such-order')).body).toEqual([]);
  });

  it('filters by state, customer_id and plan_id, alone and together', async () => {
    const own = await subShop();
    const active = await own.api.post('/subscriptions', cardBody());
    const failed = await own.api.post('/subscriptions', cardBody({ card: card('4005550000000019') }));
    const sameCustomer = await own.api.post('/subscriptions', {
      plan: { id: active.body.plan.id },
      customer: { id: active.body.customer.id },
    });
    const canceled = await own.api.post('/subscriptions', { plan: monthly() });
    await own.api.post(`/subscriptions/${canceled.body.id}/cancel`, { cancel_reason: 'x' });

    expect(ids((await own.api.get('/subscriptions?state=active')).body)).toEqual([active.body.id]);
    expect(ids((await own.api.get('/subscriptions?state=failed')).body)).toEqual([failed.body.id]);
    expect(ids((await own.api.get('/subscriptions?state=canceled')).body)).toEqual([canceled.body.id]);
    expect(ids((await own.api.get('/subscriptions?state=redirecting')).body)).toEqual([sameCustomer.body.id]);
    expect(ids((await own.api.get('/subscriptions?state=trial')).body)).toEqual([]);
    expect(ids((await own.api.get(`/subscriptions?customer_id=${active.body.customer.id}`)).body)).toEqual([
      sameCustomer.body.id,
      active.body.id,
    ]);
    expect(ids((await own.api.get(`/subscriptions?plan_id=${active.body.plan.id}`)).body)).toEqual([
      sameCustomer.body.id,
      active.body.id,
    ]);
    const both = await own.api.get(`/subscriptions?plan_id=${active.body.plan.id}&state=active`);
    expect(ids(both.body)).toEqual([active.body.id]);
  });
});
