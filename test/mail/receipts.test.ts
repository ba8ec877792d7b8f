import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import { mailDue } from '../../src/mail/service.js';
import { type Harness, harness } from '../harness.js';
import { visibleText } from './html-text.js';
import { Inbox } from './inbox.js';
import { emailsOf, gold, type MailShop, mailServices, mailShop, subscribe } from './setup.js';

/** Receipts and shop notices through a real SMTP server: recipients, subject, body, language. */

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

const mailFor = async (s: MailShop) => {
  await mailDue(services, { shopId: s.id });
  return inbox.to(s.customerEmail);
};

describe('receipts', () => {
  it('sends the customer a receipt in English with the receipt text, and the shop a transaction notice', async () => {
    const s = await mailShop(h);
    const sub = await subscribe(s, {
      customer: { first_name: 'Jane', last_name: 'Doe' },
      receipt_text: ['Thank you for choosing Gold.', 'VAT included.'],
    });
    const [receipt, ...more] = await mailFor(s);
    expect(more).toEqual([]);
    const mail = receipt?.mail;
    expect(receipt?.to).toEqual([s.customerEmail]);
    expect(mail?.subject).toBe('Receipt: Gold, €19.99');
    expect(mail?.from?.value).toEqual([{ address: 'no-reply@kopek.test', name: 'Test shop' }]);
    expect(mail?.replyTo?.value[0]?.address).toBe(s.shopEmail);
    expect(mail?.headers.get('content-language')).toBe('en');
    expect(mail?.text).toContain('Hello, Jane Doe.');
    expect(mail?.text).toContain('Amount: €19.99');
    expect(mail?.text).toContain('Thank you for choosing Gold.\nVAT included.');
    expect(mail?.text).toContain(`Transaction: ${sub.last_transaction.uid}`);
    expect(mail?.html).toContain('<html lang="en">');
    expect(mail?.html).toMatch(/Thank you for choosing Gold\.<br\s*\/?>/);
    expect(mail?.html).toContain('€19.99');

    const notices = inbox.to(s.shopEmail);
    expect(notices.map((n) => n.mail.subject)).toEqual(['Transaction successful: €19.99']);
    expect(notices[0]?.mail.text).toContain(sub.last_transaction.uid);
    expect(notices[0]?.mail.replyTo).toBeUndefined();
    const rows = await emailsOf(h, s.id);
    expect(rows.map((r) => [r.kind, r.status, r.attempts])).toEqual(
      expect.arrayContaining([
        ['receipt', 'sent', 1],
        ['transaction', 'sent', 1],
      ]),
    );
  });

  it('writes in Russian for a Russian subscription; a currency without minor units has no decimals', async () => {
    const s = await mailShop(h);
    await subscribe(s, {
      language: 'ru',
      plan: gold({ title: 'Золото', currency: 'JPY' }),
      receipt_text: ['Спасибо!'],
    });
    const [receipt] = await mailFor(s);
    expect(receipt?.mail.subject).toBe('Чек: «Золото», 1 999 ¥');
    expect(receipt?.mail.headers.get('content-language')).toBe('ru');
    expect(receipt?.mail.text).toContain('Спасибо за оплату');
    expect(receipt?.mail.text).toContain('Сумма: 1\u00a0999\u00a0¥');
    expect(receipt?.mail.text).toContain('Спасибо!');
    expect(receipt?.mail.html).toContain('<html lang="ru">');
  });

  it('falls back to English for a language without texts, and says so in lang', async () => {
    const s = await mailShop(h);
    await subscribe(s, { language: 'de' });
    const [receipt] = await mailFor(s);
    expect(receipt?.mail.subject).toBe('Receipt: Gold, €19.99');
    expect(receipt?.mail.html).toContain('<html lang="en">');
    expect((await emailsOf(h, s.id)).find((r) => r.kind === 'receipt')?.language).toBe('en');
  });

  it('escapes in the HTML whatever shops and buyers wrote', async () => {
    const s = await mailShop(h);
    await subscribe(s, {
      plan: gold({ title: '<script>alert("plan")</script> & Co' }),
      customer: { first_name: '<b onmouseover=alert(1)>Jane</b>' },
      receipt_text: ['<img src=x onerror=alert(2)>'],
    });
    const [receipt] = await mailFor(s);
    const html = receipt?.mail.html || '';
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b ');
    expect(html).toContain('&lt;script');
    expect(visibleText(html)).toContain('<script>alert("plan")</script> & Co');
    expect(visibleText(html)).toContain('<img src=x onerror=alert(2)>');
    expect(visibleText(html)).toContain('<b onmouseover=alert(1)>Jane</b>');
    // The plain text is text: it shows what was written, as it was written.
    expect(receipt?.mail.text).toContain('<script>alert("plan")</script> & Co');
  });

  it('sends nothing for a shop with e-mail notifications off, and never will for those events', async () => {
    const s = await mailShop(h, false);
    await subscribe(s);
    const run = await mailDue(services, { shopId: s.id });
    expect(run.written).toBe(0);
    expect(inbox.to(s.customerEmail)).toEqual([]);
    expect(await emailsOf(h, s.id)).toEqual([]);
    const waiting = await h.db.query(`SELECT 1 FROM events WHERE shop_id = $1 AND mail_status = 'pending'`, [
      s.id,
    ]);
    expect(waiting).toEqual([]);
  });
});
