import { describe, expect, it } from 'vitest';
import { client, harness, newShop } from '../harness.js';
import { cardBody } from '../subscriptions/helpers.js';
import { signedIn } from './session.js';

/** The cabinet's customers: list, search by e-mail or id, paging, a customer's page. */

async function shopWithCustomers() {
  const h = await harness();
  const shop = await newShop(h, { name: 'Customers shop' });
  const api = client(h, shop);
  const create = async (body: Record<string, unknown> = {}) => {
    const res = await api.post('/customers', { email: 'ann@example.com', ip: '10.0.0.1', ...body });
    expect(res.status).toBe(201);
    return res.body as { id: string; email: string };
  };
  return { h, shop, api, create, cab: await signedIn(h, shop) };
}

const idsIn = (html: string) =>
  [...html.matchAll(/href="\/cabinet\/customers\/(cst_\w+)"/g)].map((m) => m[1]);

describe('cabinet customers', () => {
  it('lists customers newest first and finds one by e-mail in any case, or by id', async () => {
    const { create, cab } = await shopWithCustomers();
    const ann = await create({ email: 'Ann@Example.com', first_name: 'Ann', last_name: '<i>Lee</i>' });
    const bob = await create({ email: 'bob@example.com' });
    const list = await cab.get('/cabinet/customers');
    expect(idsIn(list.body)).toEqual([bob.id, ann.id]);
    expect(list.body).toContain('Ann &lt;i>Lee&lt;/i>');
    expect(idsIn((await cab.get('/cabinet/customers?q=ann%40example.COM')).body)).toEqual([ann.id]);
    expect(idsIn((await cab.get(`/cabinet/customers?q=${bob.id}`)).body)).toEqual([bob.id]);
    // The start of an address, in any case; LIKE's wildcards and a longer text find nothing.
    expect(idsIn((await cab.get('/cabinet/customers?q=aNN%40')).body)).toEqual([ann.id]);
    expect(idsIn((await cab.get('/cabinet/customers?q=b')).body)).toEqual([bob.id]);
    expect(idsIn((await cab.get('/cabinet/customers?q=%25')).body)).toEqual([]);
    expect(idsIn((await cab.get('/cabinet/customers?q=_ob')).body)).toEqual([]);
    expect(idsIn((await cab.get('/cabinet/customers?q=bob%40example.comx')).body)).toEqual([]);
    const none = await cab.get('/cabinet/customers?q=nobody%40example.com');
    expect(idsIn(none.body)).toEqual([]);
    expect(none.body).toContain('No customer matches.');
  });

  it('pages by keyset, keeping the search', async () => {
    const { create, cab } = await shopWithCustomers();
    const made: string[] = [];
    for (let i = 0; i < 52; i++) made.push((await create({ email: 'same@example.com' })).id);
    await create({ email: 'other@example.com' });
    const first = await cab.get('/cabinet/customers?q=same%40example.com');
    expect(idsIn(first.body)).toEqual(made.slice(2).reverse());
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    expect(next).toContain('q=same%40example.com');
    expect(idsIn((await cab.get(next)).body)).toEqual([made[1], made[0]]);
  });

  it("shows a customer's details, subscriptions and payments; another shop's is not found", async () => {
    const { h, shop, create, cab } = await shopWithCustomers();
    const ann = await create({ first_name: 'Ann', city: 'Berlin', country: 'DE' });
    const page = await cab.get(`/cabinet/customers/${ann.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Berlin, DE');
    expect(page.body).toContain('No subscriptions.');
    // A subscription of hers, paid by card at once, is linked from her page with its charge.
    const sub = await client(h, shop).post('/subscriptions', cardBody({ customer: { id: ann.id } }));
    expect(sub.status).toBe(201);
    const withSub = await cab.get(`/cabinet/customers/${ann.id}`);
    expect(withSub.body).toContain(`/cabinet/subscriptions/${sub.body.id}`);
    expect(withSub.body).toContain('Gold');
    const [charge] = await h.db.query<{ transaction_uid: string }>(
      'SELECT transaction_uid FROM subscription_charges WHERE subscription_id = $1',
      [sub.body.id],
    );
    expect(charge?.transaction_uid).toBeTruthy();
    expect(withSub.body).toContain(`/cabinet/payments/${charge?.transaction_uid}`);
    // Her subscription's state in the cabinet's language, like every status on its pages.
    expect(withSub.body).toContain('<span class="badge active">Active</span>');
    cab.cookies.set('kopek_lang', 'ru');
    const inRussian = await cab.get(`/cabinet/customers/${ann.id}`);
    expect(inRussian.body).toContain('<span class="badge active">Активна</span>');
    cab.cookies.delete('kopek_lang');
    const other = await shopWithCustomers();
    const foreign = await other.create({ email: 'secret@example.com' });
    for (const id of [foreign.id, 'cst_unknown', 'nope']) {
      const res = await cab.get(`/cabinet/customers/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).not.toContain('secret@example.com');
    }
    expect(idsIn((await cab.get('/cabinet/customers?q=secret%40example.com')).body)).toEqual([]);
  });
});
