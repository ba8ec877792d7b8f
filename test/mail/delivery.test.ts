import { beforeAll, describe, expect, it } from 'vitest';
import { MAIL_LEASE_MS, MAIL_MAX_ATTEMPTS, MAIL_RETRY_DELAYS_MS } from '../../src/mail/deliver.js';
import { fanOutEvents } from '../../src/mail/fanout.js';
import { claimDueEmails } from '../../src/mail/repository.js';
import { mailDue } from '../../src/mail/service.js';
import { type Harness, harness } from '../harness.js';
import { Inbox } from './inbox.js';
import { emailsOf, keepingClock, mailServices, mailShop, subscribe } from './setup.js';

/** Sending is an outbox too: an SMTP server that is down or refuses, retries, leases. */

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

const statuses = async (shopId: number) =>
  (await emailsOf(h, shopId)).map((e) => [e.kind, e.status, e.attempts]).sort();

describe('sending', () => {
  it('keeps e-mails while the SMTP server is down, attempts recorded, and delivers each once when it is back', () =>
    keepingClock(h, async () => {
      const inbox = await Inbox.onFreePort();
      const services = mailServices(h, inbox.url);
      const s = await mailShop(h);
      await subscribe(s);
      const down = await mailDue(services, { shopId: s.id });
      expect(down).toEqual({ written: 2, sent: 0, retried: 2, failed: 0 });
      const rows = await emailsOf(h, s.id);
      expect(await statuses(s.id)).toEqual([
        ['receipt', 'pending', 1],
        ['transaction', 'pending', 1],
      ]);
      for (const row of rows) {
        expect(row.last_error).toBe('SMTP server could not be reached (ECONNREFUSED)');
        expect(row.last_error).not.toContain('127.0.0.1');
        expect(row.next_attempt_at?.getTime()).toBe(
          h.clock.now().getTime() + (MAIL_RETRY_DELAYS_MS[0] as number),
        );
      }
      // Not due yet: nothing is tried.
      expect(await mailDue(services, { shopId: s.id })).toEqual({
        written: 0,
        sent: 0,
        retried: 0,
        failed: 0,
      });

      await inbox.start();
      try {
        h.clock.advance(MAIL_RETRY_DELAYS_MS[0] as number);
        expect(await mailDue(services, { shopId: s.id })).toMatchObject({ sent: 2, retried: 0 });
        h.clock.advance(24 * 3600_000);
        expect(await mailDue(services, { shopId: s.id })).toMatchObject({ sent: 0, retried: 0 });
        expect(inbox.to(s.customerEmail)).toHaveLength(1);
        expect(inbox.to(s.shopEmail)).toHaveLength(1);
        expect(await statuses(s.id)).toEqual([
          ['receipt', 'sent', 2],
          ['transaction', 'sent', 2],
        ]);
        const shown = (await s.api.get(`/emails/${rows[0]?.id}`)).body;
        expect(shown).toMatchObject({ status: 'sent', attempts: 2, last_error: null, next_attempt_at: null });
        expect(shown.sent_at).not.toBeNull();
      } finally {
        await inbox.stop();
      }
    }));

  it('gives up at once on a recipient the server refuses for good', async () => {
    const inbox = await Inbox.onFreePort();
    await inbox.start();
    try {
      const s = await mailShop(h);
      inbox.refuse.add(s.customerEmail);
      await subscribe(s);
      const run = await mailDue(mailServices(h, inbox.url), { shopId: s.id });
      expect(run).toMatchObject({ sent: 1, failed: 1, retried: 0 });
      const receipt = (await emailsOf(h, s.id)).find((e) => e.kind === 'receipt');
      expect(receipt).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null });
      expect(receipt?.last_error).toMatch(/^SMTP 550: .*No such mailbox here/);
    } finally {
      await inbox.stop();
    }
  });

  it('tries again with growing delays and fails after the last attempt', () =>
    keepingClock(h, async () => {
      const inbox = await Inbox.onFreePort();
      const services = mailServices(h, inbox.url);
      const s = await mailShop(h);
      await subscribe(s);
      const waits: number[] = [];
      for (let n = 1; n <= MAIL_MAX_ATTEMPTS; n++) {
        await mailDue(services, { shopId: s.id });
        const receipt = (await emailsOf(h, s.id)).find((e) => e.kind === 'receipt');
        expect(receipt?.attempts).toBe(n);
        if (receipt?.next_attempt_at) {
          waits.push(receipt.next_attempt_at.getTime() - h.clock.now().getTime());
          h.clock.set(receipt.next_attempt_at);
        }
      }
      expect(waits).toEqual(MAIL_RETRY_DELAYS_MS);
      expect(await statuses(s.id)).toEqual([
        ['receipt', 'failed', MAIL_MAX_ATTEMPTS],
        ['transaction', 'failed', MAIL_MAX_ATTEMPTS],
      ]);
    }));

  it('sends an e-mail whose sender died again after the lease, not before, whatever the test clock does', () =>
    keepingClock(h, async () => {
      const inbox = await Inbox.onFreePort();
      await inbox.start();
      try {
        const services = mailServices(h, inbox.url);
        const s = await mailShop(h);
        await subscribe(s);
        expect(await fanOutEvents(services, { shopId: s.id })).toBe(2);
        // A sender claims them and dies before saying how it went.
        const claimed = await h.db.tx((tx) => claimDueEmails(tx, h.clock.now(), 10, MAIL_LEASE_MS, s.id));
        expect(claimed).toHaveLength(2);
        const advanced = await s.api.post('/test_clock/advance', { by: 'PT1H' });
        expect(advanced.status, advanced.text).toBe(200);
        expect(await mailDue(services, { shopId: s.id })).toMatchObject({ sent: 0 });
        h.clock.advance(MAIL_LEASE_MS);
        expect(await mailDue(services, { shopId: s.id })).toMatchObject({ sent: 2 });
        expect(await statuses(s.id)).toEqual([
          ['receipt', 'sent', 2],
          ['transaction', 'sent', 2],
        ]);
      } finally {
        await inbox.stop();
      }
    }));
});
