import { beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/context.js';
import { fanOutEvents } from '../../src/mail/fanout.js';
import { type Harness, harness } from '../harness.js';
import { emailsOf, type MailShop, mailServices, mailShop, subscribe } from './setup.js';

/**
 * An event is written for the e-mail fan-out only when its shop sends e-mails: the events of a shop
 * with e-mail off are written done, so the fan-out never locks and rewrites them. E-mail turned on
 * applies to the events written from then on.
 */

let h: Harness;
let services: Services;

beforeAll(async () => {
  h = await harness();
  services = mailServices(h);
});

const statusesOf = async (s: MailShop) =>
  h.db.query<{ id: number; event: string; mail_status: string; resource_id: string }>(
    'SELECT id, event, mail_status, resource_id FROM events WHERE shop_id = $1 ORDER BY id',
    [s.id],
  );

describe('the e-mail status of an event as it is written', () => {
  it('is done for every event of a shop that sends no e-mail: the create, its payment, a cancel', async () => {
    const s = await mailShop(h, false);
    const sub = await subscribe(s);
    const canceled = await s.api.post(`/subscriptions/${sub.id}/cancel`, { cancel_reason: 'Asked' });
    expect(canceled.status, canceled.text).toBe(200);
    const events = await statusesOf(s);
    expect(events.map((e) => e.event)).toEqual(
      expect.arrayContaining([
        'created.subscription',
        'successful.transaction',
        'activated.subscription',
        'canceled.subscription',
      ]),
    );
    expect(new Set(events.map((e) => e.mail_status))).toEqual(new Set(['done']));
    // Nothing waits for the fan-out, so it writes nothing and touches none of them.
    await fanOutEvents(services, { shopId: s.id });
    expect(await emailsOf(h, s.id)).toEqual([]);
  });

  it('is pending for a shop that sends e-mail, until the fan-out has written its e-mails', async () => {
    const s = await mailShop(h);
    await subscribe(s);
    const waiting = await statusesOf(s);
    expect(waiting.length).toBeGreaterThan(0);
    expect(new Set(waiting.map((e) => e.mail_status))).toEqual(new Set(['pending']));
    expect(await fanOutEvents(services, { shopId: s.id })).toBeGreaterThan(0);
    expect(new Set((await statusesOf(s)).map((e) => e.mail_status))).toEqual(new Set(['done']));
  });

  it('follows the setting when it changes: on for the events written after, none before', async () => {
    const s = await mailShop(h, false);
    const before = await subscribe(s);
    const on = await s.api.send('PATCH', '/shop', {
      email_notifications: true,
      notification_email: s.shopEmail,
    });
    expect(on.status, on.text).toBe(200);
    const after = await subscribe(s, { customer: { email: `later${s.id}@example.com` } });
    const events = await statusesOf(s);
    const of = (id: string) => new Set(events.filter((e) => e.resource_id === id).map((e) => e.mail_status));
    expect(of(before.id)).toEqual(new Set(['done']));
    expect(of(after.id)).toEqual(new Set(['pending']));
    const pending = new Set(events.filter((e) => e.mail_status === 'pending').map((e) => Number(e.id)));
    await fanOutEvents(services, { shopId: s.id });
    const emails = await emailsOf(h, s.id);
    expect(emails.length).toBeGreaterThan(0);
    // Every e-mail comes of an event written after the switch: the later subscription's receipt and
    // the shop's notices of it; none to the first customer.
    expect(emails.every((e) => pending.has(Number(e.event_id)))).toBe(true);
    expect(emails.filter((e) => e.recipient === s.customerEmail)).toEqual([]);
    expect(emails.some((e) => e.recipient === `later${s.id}@example.com`)).toBe(true);
  });
});
