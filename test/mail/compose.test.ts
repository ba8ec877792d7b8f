import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { draftsFor, type OutboxEvent } from '../../src/mail/compose.js';
import { renderHtml } from '../../src/mail/html.js';
import { formatDate, type Message, oneLine, renderText } from '../../src/mail/render.js';
import { sendError } from '../../src/mail/smtp.js';
import { fill } from '../../src/mail/texts.js';
import { visibleText } from './html-text.js';

/** The pure parts: which e-mails an event calls for, escaping, formats, SMTP errors, settings. */

const shop = {
  name: 'Shop',
  timeZone: 'Europe/Minsk',
  emailNotifications: true,
  notificationEmail: 'o@shop.example',
};

const subscription = (extra: Record<string, unknown> = {}) => ({
  id: 'sbs_1',
  customer: { email: 'jane@example.com' },
  plan: { title: 'Gold', currency: 'KWD', plan: { amount: 1999 }, trial: { amount: 500 } },
  last_transaction: { uid: 'u-1', created_at: '2026-01-15T10:00:00.000Z', message: 'Declined' },
  language: 'en',
  paid_billing_cycles: 0,
  active_to: null,
  ...extra,
});

const event = (name: string, payload: Record<string, unknown>): OutboxEvent => ({
  id: 7,
  shop_id: 1,
  resource_type: name.endsWith('.transaction') ? 'transaction' : 'subscription',
  resource_id: 'sbs_1',
  event: name,
  payload,
  created_at: new Date(0),
});

const kinds = (e: OutboxEvent, s = shop, sub?: Record<string, unknown>) =>
  draftsFor(e, s, sub).map((d) => [d.kind, d.to, d.about]);

describe('which e-mails an event calls for', () => {
  it('a receipt for each successful charge; none for a free trial or without an address', () => {
    expect(kinds(event('renewed.subscription', subscription()))).toEqual([
      ['receipt', 'jane@example.com', 'u-1'],
    ]);
    const freeTrial = subscription({ plan: { title: 'G', currency: 'EUR', trial: { amount: 0 } } });
    expect(kinds(event('trial_started.subscription', freeTrial))).toEqual([]);
    expect(kinds(event('renewed.subscription', subscription({ customer: {} })))).toEqual([]);
    const injected = subscription({ customer: { email: 'a@b.example\r\nBcc: c@d.example' } });
    expect(kinds(event('renewed.subscription', injected))).toEqual([]);
  });

  it('charges a paid trial’s amount only for its own failed first charge', () => {
    const amount = (e: OutboxEvent) => draftsFor(e, shop)[0]?.message.rows[0];
    expect(amount(event('trial_started.subscription', subscription()))).toEqual(['Amount', 'KWD\u00a00.500']);
    expect(amount(event('failed.subscription', subscription()))).toEqual(['Amount', 'KWD\u00a00.500']);
    const afterTrial = subscription({ active_to: '2026-02-15T10:00:00.000Z' });
    expect(amount(event('failed.subscription', afterTrial))).toEqual(['Amount', 'KWD\u00a01.999']);
  });

  it('a failed transaction of a subscription tells its customer; every final one tells the shop', () => {
    const txn = {
      uid: 'u-2',
      status: 'failed',
      type: 'payment',
      amount: 1999,
      currency: 'KWD',
      created_at: '2026-01-15T10:00:00.000Z',
      additional_data: { subscription_id: 'sbs_1' },
    };
    const failed = event('failed.transaction', { transaction: txn });
    expect(kinds(failed, shop, subscription())).toEqual([
      ['transaction', 'o@shop.example', '7'],
      ['payment_failed', 'jane@example.com', 'u-2'],
    ]);
    const incomplete = event('incomplete.transaction', { transaction: { ...txn, status: 'incomplete' } });
    expect(kinds(incomplete, shop, subscription())).toEqual([]);
  });

  it('nothing when the shop has e-mail notifications off', () => {
    expect(
      kinds(event('renewed.subscription', subscription()), { ...shop, emailNotifications: false }),
    ).toEqual([]);
  });
});

describe('formats', () => {
  it('escapes the HTML characters in every part of the HTML, and shows them as written', () => {
    const w = `<a href="x" title='y'>&</a>`;
    const m: Message = {
      language: 'en',
      subject: `s ${w}`,
      heading: `h ${w}`,
      paragraphs: [`p ${w}`],
      rows: [[`l ${w}`, `v ${w}`]],
      notes: [`n1 ${w}`, `n2 ${w}`],
      footer: `f ${w}`,
    };
    const html = renderHtml(m);
    expect(html).not.toContain('<a ');
    expect(html).not.toContain('</a>');
    expect(html).toContain('<html lang="en">');
    const seen = visibleText(html);
    for (const part of ['s', 'h', 'p', 'l', 'v', 'n1', 'n2', 'f']) expect(seen).toContain(`${part} ${w}`);
    // The text says the same, with nothing escaped.
    expect(renderText(m)).toContain(`n1 ${w}\nn2 ${w}`);
  });

  it('keeps headers on one line and values as given', () => {
    expect(oneLine('Gold\r\nBcc: x@y.example')).toBe('Gold Bcc: x@y.example');
    expect(fill('{plan} for {amount}', { plan: '{amount}', amount: '1 EUR' })).toBe('{amount} for 1 EUR');
  });

  it('shows instants in the shop’s zone', () => {
    expect(formatDate('2026-01-15T22:30:00.000Z', 'Asia/Tokyo')).toBe('2026-01-16 07:30 (Asia/Tokyo)');
    expect(formatDate('2026-07-01T00:00:00.000Z', 'Nowhere/Else')).toBe('2026-07-01 00:00 (UTC)');
  });

  it('tells a refusal for good from a reason to try again, and keeps the server’s address out', () => {
    expect(sendError({ responseCode: 550, response: '550 no such user', command: 'RCPT TO' })).toEqual({
      message: 'SMTP 550: 550 no such user',
      permanent: true,
    });
    expect(sendError({ responseCode: 535, response: '535 bad login', command: 'AUTH PLAIN' }).permanent).toBe(
      false,
    );
    expect(sendError({ responseCode: 451, response: '451 later', command: 'DATA' }).permanent).toBe(false);
    expect(
      sendError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:25'), { code: 'ESOCKET' })),
    ).toEqual({
      message: 'SMTP server could not be reached (ECONNREFUSED)',
      permanent: false,
    });
  });
});

describe('settings', () => {
  it('reads SMTP_URL, MAIL_FROM and MAIL_INTERVAL_MS, and never repeats a bad SMTP_URL', () => {
    const c = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com', MAIL_FROM: 'b@shop.example' });
    expect(c).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com', mailFrom: 'b@shop.example' });
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example.com' }).mailFrom).toBe('no-reply@pay.example.com');
    expect(() => loadConfig({ SMTP_URL: 'http://u:secret@x' })).toThrow(/SMTP_URL must be/);
    expect(() => loadConfig({ SMTP_URL: 'http://u:secret@x' })).not.toThrow(/secret/);
    expect(() => loadConfig({ MAIL_FROM: 'Kopek <b@x.example>' })).toThrow(/MAIL_FROM must be one plain/);
    expect(() => loadConfig({ MAIL_INTERVAL_MS: '10' })).toThrow(/MAIL_INTERVAL_MS/);
  });
});
