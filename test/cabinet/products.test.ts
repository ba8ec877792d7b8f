import { describe, expect, it } from 'vitest';
import { client, harness, newShop } from '../harness.js';
import { signedIn } from './session.js';

/** The cabinet's products: list with stock and badges, a product's page with its payment links. */

async function shopWithProducts() {
  const h = await harness();
  const shop = await newShop(h, { name: 'Products shop' });
  const api = client(h, shop);
  const create = async (body: Record<string, unknown>) => {
    const res = await api.post('/products', {
      description: 'A thing',
      currency: 'EUR',
      amount: 1999,
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; pay_url: string; confirm_url: string };
  };
  return { h, shop, api, create, cab: await signedIn(h, shop) };
}

const idsIn = (html: string) => [...html.matchAll(/href="\/cabinet\/products\/(prd_\w+)"/g)].map((m) => m[1]);

describe('cabinet products', () => {
  it('lists products with price, stock, sold-out and expired badges, escaping their names', async () => {
    const { h, create, cab } = await shopWithProducts();
    const unlimited = await create({ name: 'Unlimited e-book' });
    const few = await create({ name: 'Poster', quantity: 3, amount: 500, currency: 'JPY' });
    const gone = await create({ name: 'Sold out mug', quantity: 0 });
    const old = await create({ name: '<script>alert("x")</script>', expired_at: '2026-12-31T00:00:00Z' });
    await h.db.query("UPDATE products SET expires_at = '2026-01-01T00:00:00Z' WHERE id = $1", [old.id]);
    const page = await cab.get('/cabinet/products');
    expect(page.status).toBe(200);
    expect(idsIn(page.body)).toEqual([old.id, gone.id, few.id, unlimited.id]);
    expect(page.body).toContain('Unlimited');
    expect(page.body).toContain('¥500');
    expect(page.body).toContain('sold out');
    expect(page.body).toContain('expired');
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).toContain('&lt;script>alert(&quot;x&quot;)&lt;/script>');
  });

  it('pages by keyset', async () => {
    const { create, cab } = await shopWithProducts();
    const made: string[] = [];
    for (let i = 0; i < 51; i++) made.push((await create({ name: `P${i}` })).id);
    const first = await cab.get('/cabinet/products');
    expect(idsIn(first.body)).toEqual(made.slice(1).reverse());
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    expect(idsIn((await cab.get(next)).body)).toEqual([made[0]]);
  });

  it("shows a product's payment links in read-only fields with a Copy button for scripts", async () => {
    const { create, cab } = await shopWithProducts();
    const p = await create({ name: 'Course', quantity: 7, visible_fields: ['email', 'phone'] });
    const page = await cab.get(`/cabinet/products/${p.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`value="${p.pay_url}"`);
    expect(page.body).toContain(`value="${p.confirm_url}"`);
    expect(page.body).toMatch(/<input id="pay-url" type="text" class="copy" value="[^"]+" readonly/);
    expect(page.body).toContain('data-copy="pay-url"');
    expect(page.body).toMatch(/\/assets\/copy\.js\?v=/);
    expect(page.body).toContain('7 left');
    expect(page.body).toContain('email, phone');
  });

  it("answers another shop's product, an unknown and a malformed id with not found", async () => {
    const { cab } = await shopWithProducts();
    const other = await shopWithProducts();
    const foreign = await other.create({ name: 'Secret product' });
    for (const id of [foreign.id, 'prd_nothing', 'x"><script>', '%00']) {
      const res = await cab.get(`/cabinet/products/${encodeURIComponent(id)}`);
      expect(res.status).toBe(404);
      expect(res.body).not.toContain('Secret product');
    }
    expect((await cab.get('/cabinet/products')).body).not.toContain(foreign.id);
  });

  it('speaks Russian when asked', async () => {
    const { create, cab } = await shopWithProducts();
    const p = await create({ name: 'Книга' });
    cab.cookies.set('kopek_lang', 'ru');
    const page = await cab.get(`/cabinet/products/${p.id}`);
    expect(page.body).toContain('Ссылка на оплату');
    expect(page.body).toContain('lang="ru"');
  });
});
