import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { mailDue } from '../../src/mail/service.js';
import { type Harness, harness } from '../harness.js';
import { Inbox } from './inbox.js';
import { card, emailsOf, gold, keepingClock, mailServices, mailShop, renew, subscribe } from './setup.js';

/** Failed renewals and cancellations, told to the customer through a real SMTP server. */

let h: Harness;
let inbox: Inbox;
let services: Services;

beforeAll(async () => {
  h = await harness();
  inbox = await Inbox.onFreePort();
  await inbox.start();
  services = mailServices(h, inbox.url);
});

afterAll(() => inbox.stop());

// E-mails of one run go out side by side: they may arrive in any order.
const subjects = (address: string) =>
  inbox
    .to(address)
    .map((r) => r.mail.subject)
    .sort();
const withSubject = (address: string, subject: string) =>
  inbox.to(address).find((r) => r.mail.subject === subject)?.mail;

describe('failed charges and cancellations', () => {
  it('tells the customer of the last failed renewal once, and that the subscription ended', () =>
    keepingClock(h, async () => {
      const s = await mailShop(h);
      const sub = await subscribe(s, {
        card: card(KOPEK_CARDS.firstThenDeclined),
        plan: gold({ number_payment_attempts: 1 }),
      });
      await mailDue(services, { shopId: s.id });
      await renew(h, s, sub.id);
      await mailDue(services, { shopId: s.id });
      // The failed transaction and failed.subscription name the same charge: one e-mail.
      expect(subjects(s.customerEmail)).toEqual([
        'Payment failed: Gold',
        'Receipt: Gold, €19.99',
        'Subscription canceled: Gold',
      ]);
      const failed = withSubject(s.customerEmail, 'Payment failed: Gold');
      const canceled = withSubject(s.customerEmail, 'Subscription canceled: Gold');
      expect(failed?.text).toContain('We could not charge €19.99 for Gold at Test shop.');
      expect(failed?.text).toContain('Reason: Insufficient funds');
      expect(canceled?.text).toContain('Reason: Payment failed 1 time in a row: Insufficient funds');
      expect(canceled?.html).toContain('<html lang="en">');
      const kinds = (await emailsOf(h, s.id))
        .filter((e) => e.recipient === s.customerEmail)
        .map((e) => e.kind);
      expect(kinds).toEqual(['receipt', 'payment_failed', 'canceled']);
    }));

  it('tells the customer of a failed renewal that will be tried again', () =>
    keepingClock(h, async () => {
      const s = await mailShop(h);
      const sub = await subscribe(s, { card: card(KOPEK_CARDS.firstThenDeclined), language: 'ru' });
      await mailDue(services, { shopId: s.id });
      await renew(h, s, sub.id);
      const after = (await s.api.get(`/subscriptions/${sub.id}`)).body;
      expect(after.cancelled_at).toBeUndefined();
      await mailDue(services, { shopId: s.id });
      expect(subjects(s.customerEmail)).toEqual(['Платёж не прошёл: «Gold»', 'Чек: «Gold», 19,99 €']);
      const failed = withSubject(s.customerEmail, 'Платёж не прошёл: «Gold»');
      expect(failed?.text).toContain('Не удалось списать 19,99\u00a0€ за «Gold» в магазине «Test shop».');
      expect(failed?.text).toContain('Причина: Insufficient funds');
      expect(failed?.html).toContain('<html lang="ru">');
      // The shop hears of both transactions.
      expect(subjects(s.shopEmail)).toEqual(['Transaction failed: €19.99', 'Transaction successful: €19.99']);
    }));

  it('tells the customer when the shop cancels, with the reason and until when it is paid', async () => {
    const s = await mailShop(h);
    const sub = await subscribe(s);
    const res = await s.api.post(`/subscriptions/${sub.id}/cancel`, { cancel_reason: 'Customer asked' });
    expect(res.status, res.text).toBe(200);
    await mailDue(services, { shopId: s.id });
    const canceled = withSubject(s.customerEmail, 'Subscription canceled: Gold');
    expect(canceled?.text).toContain('Reason: Customer asked');
    expect(canceled?.text).toMatch(/Paid until: \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\)/);
  });

  it('shows dates in the shop’s time zone', async () => {
    const s = await mailShop(h);
    const zone = await s.api.send('PATCH', '/shop', { time_zone: 'Asia/Tokyo' });
    expect(zone.status, zone.text).toBe(200);
    const sub = await subscribe(s);
    await mailDue(services, { shopId: s.id });
    const [receipt] = inbox.to(s.customerEmail);
    const tokyo = new Date(new Date(sub.last_transaction.created_at).getTime() + 9 * 3600_000);
    const local = tokyo.toISOString().slice(0, 16).replace('T', ' ');
    expect(receipt?.mail.text).toContain(`Date: ${local} (Asia/Tokyo)`);
  });
});
