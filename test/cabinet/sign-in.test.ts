import { describe, expect, it } from 'vitest';
import { harness, newShop, withClock } from '../harness.js';
import { cabinetClient, signedIn } from './session.js';

/** Signing in and out of the cabinet: sessions, CSRF, rate limits, cookies. */

let ipSeq = 1;
const freshIp = () => `10.9.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

describe('cabinet sign-in', () => {
  it('shows a sign-in form that password managers understand', async () => {
    const h = await harness();
    const c = cabinetClient(h, freshIp());
    const page = await c.get('/cabinet/sign-in');
    expect(page.status).toBe(200);
    expect(page.body).toContain('autocomplete="username"');
    expect(page.body).toContain('autocomplete="current-password"');
    expect(page.body).toContain('name="_csrf"');
  });

  it('signs in with the shop id and secret key, and keeps the session in an HttpOnly Lax cookie', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = cabinetClient(h, freshIp());
    await c.get('/cabinet/sign-in?next=/cabinet/settings');
    const res = await h.app.inject({
      method: 'POST',
      url: '/cabinet/sign-in',
      headers: {
        cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        _csrf: c.csrf(),
        shop_id: String(shop.shop.id),
        secret_key: shop.secret,
        next: '/cabinet/settings',
      }).toString(),
      remoteAddress: freshIp(),
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/cabinet/settings');
    const cookie = res.cookies.find((k) => k.name === 'kopek_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    expect(cookie?.secure).toBeFalsy();
    // The store keeps only a hash of the cookie's value.
    const rows = await h.db.query<{ token_hash: string }>(
      'SELECT token_hash FROM cabinet_sessions WHERE shop_id = $1',
      [shop.shop.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).not.toContain(cookie?.value);
  });

  it('never sends a sign-in to another site', async () => {
    const h = await harness();
    const shop = await newShop(h);
    for (const next of ['https://evil.test/', '//evil.test/cabinet', '/cabinet//evil.test', '/\\evil.test']) {
      const c = cabinetClient(h, freshIp());
      await c.get('/cabinet/sign-in');
      const res = await c.post('/cabinet/sign-in', {
        shop_id: String(shop.shop.id),
        secret_key: shop.secret,
        next,
      });
      expect(res.location).toBe('/cabinet');
    }
  });

  it('refuses a wrong key or an unknown shop with the same answer', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = cabinetClient(h, freshIp());
    await c.get('/cabinet/sign-in');
    const wrong = await c.post('/cabinet/sign-in', { shop_id: String(shop.shop.id), secret_key: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('The shop id or secret key is wrong.');
    const unknown = await c.post('/cabinet/sign-in', { shop_id: '2147483000', secret_key: 'nope' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toContain('The shop id or secret key is wrong.');
    const blank = await c.post('/cabinet/sign-in', { shop_id: '', secret_key: '' });
    expect(blank.status).toBe(422);
    expect(c.cookies.has('kopek_session')).toBe(false);
  });

  it('refuses a sign-in form posted without its CSRF token', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = cabinetClient(h, freshIp());
    await c.get('/cabinet/sign-in');
    const res = await c.post('/cabinet/sign-in', {
      _csrf: '',
      shop_id: String(shop.shop.id),
      secret_key: shop.secret,
    });
    expect(res.status).toBe(403);
    expect(c.cookies.has('kopek_session')).toBe(false);
  });

  it('stops one address after repeated failures across shops', async () => {
    const h = await harness();
    const ip = freshIp();
    const c = cabinetClient(h, ip);
    await c.get('/cabinet/sign-in');
    for (let i = 0; i < 20; i++) {
      const res = await c.post('/cabinet/sign-in', { shop_id: String(2_000_000_000 + i), secret_key: 'x' });
      expect(res.status).toBe(401);
    }
    const shop = await newShop(h);
    const blocked = await c.post('/cabinet/sign-in', {
      shop_id: String(shop.shop.id),
      secret_key: shop.secret,
    });
    expect(blocked.status).toBe(429);
  });

  it('sends a visitor without a session to sign in, and back afterwards', async () => {
    const h = await harness();
    const c = cabinetClient(h, freshIp());
    const res = await c.get('/cabinet/settings?x=1');
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/cabinet/sign-in?next=${encodeURIComponent('/cabinet/settings?x=1')}`);
  });

  it('signs out: the session ends in the store, not only in the browser', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = await signedIn(h, shop, freshIp());
    const session = c.cookies.get('kopek_session') as string;
    await c.get('/cabinet/sign-in');
    const out = await c.post('/cabinet/sign-out', {});
    expect(out.status).toBe(303);
    expect(out.location).toBe('/cabinet/sign-in?signed_out=1');
    const again = await h.app.inject({
      method: 'GET',
      url: '/cabinet/settings',
      headers: { cookie: `kopek_session=${session}` },
    });
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toContain('/cabinet/sign-in');
  });

  it('ends sessions on the server after two idle hours', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = await signedIn(h, shop, freshIp());
    const { findSession } = await import('../../src/cabinet/sessions.js');
    const token = c.cookies.get('kopek_session') as string;
    expect(await findSession(h.db, token, h.clock.now())).toBeDefined();
    await withClock(h, 2 * 60 * 60 * 1000 + 1000, async () => {
      expect(await findSession(h.db, token, h.clock.now())).toBeUndefined();
    });
  });

  it('ends sessions when the shop rotates its secret key', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = await signedIn(h, shop, freshIp());
    const { findSession } = await import('../../src/cabinet/sessions.js');
    const token = c.cookies.get('kopek_session') as string;
    await h.db.query("UPDATE shops SET secret_hash = repeat('0', 64) WHERE id = $1", [shop.shop.id]);
    expect(await findSession(h.db, token, h.clock.now())).toBeUndefined();
  });
});
