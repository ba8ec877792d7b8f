import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { type App, buildApp } from '../../src/compose/app.js';
import { loadConfig } from '../../src/config.js';
import { type Harness, harness, newShop } from '../harness.js';

/**
 * A deployment whose PUBLIC_URL is https marks every cookie Secure, even when the request reaches
 * Kopek as plain http (a TLS proxy in front, TRUST_PROXY not set): the session, the CSRF secret and
 * the language choices. With an http PUBLIC_URL a plain-http request gets them without Secure.
 * Every one of them is HttpOnly.
 */

const COOKIES = ['kopek_session', 'kopek_csrf', 'kopek_lang', 'kopek_page_lang'];

interface Seen {
  name: string;
  secure?: boolean;
  httpOnly?: boolean;
}

/** Signs in, switches the cabinet's language and a hosted page's: every cookie these set. */
async function cookiesOf(h: Harness, app: App): Promise<Seen[]> {
  const shop = await newShop(h);
  const seen: Seen[] = [];
  const form = await app.inject({ method: 'GET', url: '/cabinet/sign-in', remoteAddress: '10.39.200.1' });
  seen.push(...form.cookies);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const cookie = form.cookies.map((k) => `${k.name}=${k.value}`).join('; ');
  const signIn = await app.inject({
    method: 'POST',
    url: '/cabinet/sign-in',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      _csrf: csrf,
      shop_id: String(shop.shop.id),
      secret_key: shop.secret,
    }).toString(),
    remoteAddress: '10.39.200.1',
  });
  expect(signIn.statusCode).toBe(303);
  seen.push(...signIn.cookies);
  seen.push(...(await app.inject({ method: 'GET', url: '/cabinet/language?to=ru' })).cookies);
  seen.push(...(await app.inject({ method: 'GET', url: '/products/prd_unknown/pay?lang=ru' })).cookies);
  return seen;
}

describe('Secure cookies', () => {
  let h: Harness;
  let httpsApp: App;

  beforeAll(async () => {
    h = await harness();
    const config = loadConfig({
      PUBLIC_URL: 'https://kopek.example',
      KOPEK_MASTER_KEY: h.masterKey.toString('hex'),
      LOG_LEVEL: 'silent',
    });
    const log = pino({ level: 'silent' }) as FastifyBaseLogger;
    httpsApp = await buildApp({ config, db: h.db, clock: new ManualClock(), masterKey: h.masterKey, log });
    await httpsApp.ready();
  });
  afterAll(() => httpsApp?.close());

  it('are Secure when PUBLIC_URL is https, though the request came over plain http', async () => {
    const seen = await cookiesOf(h, httpsApp);
    for (const name of COOKIES) {
      const found = seen.filter((k) => k.name === name);
      expect(found.length, name).toBeGreaterThan(0);
      for (const k of found) expect(k.secure, name).toBe(true);
    }
  });

  it('are all HttpOnly: no script of the pages reads one', async () => {
    const seen = await cookiesOf(h, h.app);
    for (const name of COOKIES) {
      const found = seen.filter((k) => k.name === name);
      expect(found.length, name).toBeGreaterThan(0);
      for (const k of found) expect(k.httpOnly, name).toBe(true);
    }
  });

  it('are not Secure over plain http when PUBLIC_URL is http', async () => {
    const seen = await cookiesOf(h, h.app);
    for (const name of COOKIES) {
      const found = seen.filter((k) => k.name === name);
      expect(found.length, name).toBeGreaterThan(0);
      for (const k of found) expect(k.secure, name).toBeFalsy();
    }
  });
});
