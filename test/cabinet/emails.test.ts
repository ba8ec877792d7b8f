import { beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import { mailDue } from '../../src/mail/service.js';
import { type Harness, harness, newShop } from '../harness.js';
import { emailsOf, type MailShop, mailServices, mailShop, subscribe } from '../mail/setup.js';
import { signedIn } from './session.js';

/** The cabinet's e-mails: kept without SMTP, listed, filtered, paged, and read safely. */

let h: Harness;
let services: Services;
beforeAll(async () => {
  h = await harness();
  services = mailServices(h);
});

let ipSeq = 1;
const ip = () => `10.32.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

async function shopWithMail(): Promise<MailShop> {
  const s = await mailShop(h);
  const sub = await subscribe(s, { receipt_text: ['<script>alert("receipt")</script>'] });
  await s.api.post(`/subscriptions/${sub.id}/cancel`, { cancel_reason: 'Testing' });
  await mailDue(services, { shopId: s.id });
  return s;
}

const ids = (html: string) =>
  [...html.matchAll(/href="\/cabinet\/emails\/(eml_[0-9A-Za-z]+)"/g)].map((m) => m[1]);

describe('cabinet e-mails', () => {
  it('lists kept e-mails newest first, filtered by status, kind and recipient', async () => {
    const s = await shopWithMail();
    const rows = await emailsOf(h, s.id);
    const c = await signedIn(h, s.shop, ip());
    const all = await c.get('/cabinet/emails');
    expect(all.status).toBe(200);
    expect(ids(all.body)).toEqual(rows.map((r) => r.id).reverse());
    expect(all.body).toContain('class="badge kept"');
    expect(all.body).toContain('Receipt: Gold, €19.99');

    expect(ids((await c.get('/cabinet/emails?kind=receipt')).body)).toHaveLength(1);
    expect(ids((await c.get('/cabinet/emails?status=kept')).body)).toHaveLength(3);
    expect(ids((await c.get('/cabinet/emails?status=sent')).body)).toHaveLength(0);
    const toShop = await c.get(`/cabinet/emails?to=${encodeURIComponent(s.shopEmail.toUpperCase())}`);
    expect(ids(toShop.body)).toEqual([rows.find((r) => r.kind === 'transaction')?.id]);
    const bad = await c.get('/cabinet/emails?kind=spam');
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('Choose a value from the list.');
  });

  it('pages by keyset', async () => {
    const shop = await newShop(h);
    await h.db.query(
      `INSERT INTO emails (id, shop_id, event_id, kind, about, recipient, subject, text, html, language, status, created_at)
       SELECT 'eml_page' || $1::text || 'x' || n, $1::int, n, 'receipt', 'about' || n, 'a@example.com', 'Subject ' || n,
         'text', '<p>html</p>', 'en', 'kept', now()
       FROM generate_series(1, 53) n`,
      [shop.shop.id],
    );
    const c = await signedIn(h, shop, ip());
    const first = await c.get('/cabinet/emails?status=kept');
    expect(ids(first.body)).toHaveLength(50);
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replaceAll('&amp;', '&') as string;
    expect(next).toContain('status=kept');
    const second = await c.get(next);
    expect(ids(second.body)).toHaveLength(3);
    expect(new Set([...ids(first.body), ...ids(second.body)]).size).toBe(53);
  });

  it('shows an e-mail’s text in a <pre> and its HTML only in a sandboxed frame', async () => {
    const s = await shopWithMail();
    const receipt = (await emailsOf(h, s.id)).find((r) => r.kind === 'receipt');
    const c = await signedIn(h, s.shop, ip());
    const page = await h.app.inject({
      method: 'GET',
      url: `/cabinet/emails/${receipt?.id}`,
      headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<pre class="email-text" lang="en">');
    // Shop- and buyer-written text is never markup of the cabinet's page.
    expect(page.body).not.toContain('<script>alert');
    expect(page.body).not.toContain('<html lang="en"><head><meta charset="utf-8"><title>Receipt');
    expect(page.body).toMatch(/<iframe[^>]+ sandbox[ >]/);
    expect(page.body).toContain(`src="/cabinet/emails/${receipt?.id}/html"`);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("frame-src 'self'");
    expect(csp).toContain("script-src 'self'");

    const html = await h.app.inject({
      method: 'GET',
      url: `/cabinet/emails/${receipt?.id}/html`,
      headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    expect(html.statusCode).toBe(200);
    expect(html.body).toBe(receipt?.html);
    expect(String(html.headers['content-security-policy'])).toMatch(/^sandbox; default-src 'none'/);
    expect(html.headers['x-frame-options']).toBe('SAMEORIGIN');
  });

  it('answers another shop’s e-mail with not found', async () => {
    const s = await shopWithMail();
    const [theirs] = await emailsOf(h, s.id);
    const c = await signedIn(h, await newShop(h), ip());
    for (const url of [
      `/cabinet/emails/${theirs?.id}`,
      `/cabinet/emails/${theirs?.id}/html`,
      '/cabinet/emails/x',
    ]) {
      const res = await c.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body).not.toContain(theirs?.subject);
    }
  });
});
