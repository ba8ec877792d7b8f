import { describe, expect, it } from 'vitest';
import { sameOriginPath } from '../../src/pages/redirect-target.js';
import { harness, newShop } from '../harness.js';
import { cabinetClient } from './session.js';

/**
 * Every redirect whose target a request gives (the sign-in's `next`, the language switch's `back`,
 * the page a visitor without a session asked for) goes to a cabinet path of this origin, written
 * percent-encoded: a line break, a control character or a letter beyond ASCII never makes a 500 nor
 * reaches the Location header raw.
 */

let ipSeq = 1;
const freshIp = () => `10.39.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

describe('sameOriginPath', () => {
  const cabinet = (t: unknown) => sameOriginPath(t, '/cabinet', '/cabinet');

  it('keeps a cabinet path with its query', () => {
    expect(cabinet('/cabinet')).toBe('/cabinet');
    expect(cabinet('/cabinet/payments?status=failed&from=2026-01-01')).toBe(
      '/cabinet/payments?status=failed&from=2026-01-01',
    );
  });

  it('percent-encodes what is not plain ASCII, and escapes a % that starts no escape', () => {
    expect(cabinet('/cabinet/é')).toBe('/cabinet/%C3%A9');
    expect(cabinet('/cabinet/payments?q=日本')).toBe('/cabinet/payments?q=%E6%97%A5%E6%9C%AC');
    expect(cabinet('/cabinet/\u2028')).toBe('/cabinet/%E2%80%A8');
    expect(cabinet('/cabinet/\ud800')).toBe('/cabinet/%EF%BF%BD');
    expect(cabinet('/cabinet/a b')).toBe('/cabinet/a%20b');
    expect(cabinet('/cabinet/%zz?x=%C3%A9')).toBe('/cabinet/%25zz?x=%C3%A9');
    expect(cabinet('/cabinet?q="<>`{|}^\\')).toBe('/cabinet?q=%22%3C%3E%60%7B%7C%7D%5E%5C');
  });

  it('falls back on control characters, other origins and paths outside the prefix', () => {
    for (const bad of [
      '/cabinet/payments\nenv;',
      '/cabinet/\r',
      '/cabinet/\t',
      '/cabinet/\u0000',
      '/cabinet/\u0085',
      '/cabinet/\u007f',
      'https://evil.test/cabinet',
      '//evil.test/cabinet',
      '/\\evil.test',
      '/cabinet//evil.test',
      '/cabinet/../admin',
      '/cabinet/%2e%2e/admin',
      '/cabinet\\..\\admin',
      '/cabinetx',
      'cabinet',
      '',
      `/cabinet/${'x'.repeat(3000)}`,
      undefined,
      ['/cabinet'],
      42,
    ])
      expect(cabinet(bad), JSON.stringify(bad)).toBe('/cabinet');
  });
});

describe('cabinet redirects to targets from the request', () => {
  it('switches the language whatever `back` holds, to a valid cabinet Location', async () => {
    const h = await harness();
    const c = cabinetClient(h, freshIp());
    const cases: Array<[string, string]> = [
      ['%2Fcabinet%2Fpayments%0Aenv%3B', '/cabinet'],
      ['%2Fcabinet%2F%0D', '/cabinet'],
      ['/cabinet/%E2%80%A8', '/cabinet/%E2%80%A8'],
      ['/cabinet/%C3%A9', '/cabinet/%C3%A9'],
      ['/cabinet/payments%3Fq%3D%C3%A9', '/cabinet/payments?q=%C3%A9'],
      ['/cabinet/payments', '/cabinet/payments'],
    ];
    for (const [back, location] of cases) {
      const res = await c.get(`/cabinet/language?to=ru&back=${back}`);
      expect(res.status, back).toBe(303);
      expect(res.location, back).toBe(location);
    }
  });

  it('signs in and sets the session cookie when `next` holds a line break or a letter beyond ASCII', async () => {
    const h = await harness();
    const shop = await newShop(h);
    for (const [next, location] of [
      ['/cabinet/\n', '/cabinet'],
      ['/cabinet/payments\r\nSet-Cookie: x=1', '/cabinet'],
      ['/cabinet/\u0100', '/cabinet/%C4%80'],
      ['/cabinet/é', '/cabinet/%C3%A9'],
    ]) {
      const c = cabinetClient(h, freshIp());
      await c.get('/cabinet/sign-in');
      const res = await c.post('/cabinet/sign-in', {
        shop_id: String(shop.shop.id),
        secret_key: shop.secret,
        next: next as string,
      });
      expect(res.status, JSON.stringify(next)).toBe(303);
      expect(res.location).toBe(location);
      expect(c.cookies.has('kopek_session')).toBe(true);
    }
  });

  it('carries a crafted sign-in link`s `next` through the form as a safe one', async () => {
    const h = await harness();
    const c = cabinetClient(h, freshIp());
    const page = await c.get('/cabinet/sign-in?next=/cabinet/%0A');
    expect(page.status).toBe(200);
    expect(page.body).toContain('name="next" value="/cabinet"');
    const encoded = await c.get('/cabinet/sign-in?next=/cabinet/%C3%A9');
    expect(encoded.body).toContain('name="next" value="/cabinet/%C3%A9"');
  });

  it('sends a visitor without a session to sign in with the page asked for, encoded', async () => {
    const h = await harness();
    const c = cabinetClient(h, freshIp());
    const res = await c.get('/cabinet/payments?q=%C3%A9');
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/cabinet/sign-in?next=${encodeURIComponent('/cabinet/payments?q=%C3%A9')}`);
  });
});
