import { beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import { mailDue } from '../../src/mail/service.js';
import { client, type Harness, harness } from '../harness.js';
import { type MailShop, mailServices, mailShop, subscribe } from './setup.js';

/**
 * Without SMTP_URL (the sandbox's default) nothing is sent and nothing is lost: e-mails are kept
 * and the shop reads them over the API, its own only.
 */

let h: Harness;
let services: Services;

beforeAll(async () => {
  h = await harness();
  services = mailServices(h);
});

async function shopWithMail(): Promise<{ s: MailShop; sub: { id: string } }> {
  const s = await mailShop(h);
  const sub = await subscribe(s, { receipt_text: ['Kept, not lost.'] });
  await s.api.post(`/subscriptions/${sub.id}/cancel`, { cancel_reason: 'Testing' });
  expect(await mailDue(services, { shopId: s.id })).toEqual({ written: 3, sent: 0, retried: 0, failed: 0 });
  return { s, sub };
}

describe('GET /emails without an SMTP server', () => {
  it('keeps every e-mail and lists them newest first', async () => {
    const { s } = await shopWithMail();
    const res = await s.api.get('/emails');
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((e: { kind: string }) => e.kind)).toEqual(['canceled', 'receipt', 'transaction']);
    for (const e of res.body) expect(e).toMatchObject({ status: 'kept', attempts: 0, next_attempt_at: null });
    const receipt = res.body[1];
    expect(receipt).toMatchObject({
      to: s.customerEmail,
      subject: 'Receipt: Gold, €19.99',
      language: 'en',
    });
    expect(receipt.text).toContain('Kept, not lost.');
    expect(receipt.html).toContain('<html lang="en">');
    expect(receipt.id).toMatch(/^eml_[0-9A-Za-z]+$/);
    expect(receipt.event_id).toMatch(/^evt_\d+$/);
  });

  it('reads one e-mail by id', async () => {
    const { s } = await shopWithMail();
    const [first] = (await s.api.get('/emails')).body;
    const res = await s.api.get(`/emails/${first.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(first);
  });

  it('filters by status and recipient, and pages with a cursor', async () => {
    const { s } = await shopWithMail();
    const toShop = await s.api.get(`/emails?to=${encodeURIComponent(s.shopEmail.toUpperCase())}`);
    expect(toShop.body.map((e: { kind: string }) => e.kind)).toEqual(['transaction']);
    expect((await s.api.get('/emails?status=kept')).body).toHaveLength(3);
    expect((await s.api.get('/emails?status=sent')).body).toEqual([]);
    const first = await s.api.get('/emails?limit=2');
    expect(first.body).toHaveLength(2);
    const next = String(first.headers.link).match(/<([^>]+)>; rel="next"/)?.[1] ?? '';
    expect(next).toContain(`starting_after=${first.body[1].id}`);
    const rest = await s.api.get(next.replace(/^http:\/\/kopek\.test/, ''));
    expect(rest.body.map((e: { kind: string }) => e.kind)).toEqual(['transaction']);
  });

  it('refuses a status it does not know', async () => {
    const s = await mailShop(h);
    const res = await s.api.get('/emails?status=lost');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ status: ['must be one of pending, sent, failed, kept'] });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    const s = await mailShop(h);
    expect((await s.api.get('/emails/eml_nothingHere')).status).toBe(404);
    expect((await s.api.get('/emails/..%2Fshop')).status).toBe(404);
  });
});

describe('GET /emails security', () => {
  it("never shows another shop's e-mails", async () => {
    const { s } = await shopWithMail();
    const [theirs] = (await s.api.get('/emails')).body;
    const other = await mailShop(h);
    const res = await other.api.get(`/emails/${theirs.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Record not found', errors: { base: ['Record not found'] } });
    expect((await other.api.get('/emails')).body).toEqual([]);
    expect((await other.api.get(`/emails?starting_after=${theirs.id}`)).status).toBe(422);
  });

  it('asks for credentials', async () => {
    const anonymous = client(h, undefined);
    expect((await anonymous.get('/emails')).status).toBe(401);
    expect((await anonymous.get('/emails/eml_x')).status).toBe(401);
  });
});
