import { afterAll, describe, expect, it } from 'vitest';
import { LEASE_MS } from '../../src/notifications/deliver.js';
import { claimDue } from '../../src/notifications/queue.js';
import { withClock } from '../harness.js';
import { notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * A deliverer that dies while sending leaves its notification leased: nobody else sends it until
 * the lease runs out, then it is sent again (at least once), and the lost attempt is on record.
 */

let rx: Receiver;
afterAll(() => rx?.close());

describe('a deliverer that stops mid-send', () => {
  it('holds the notification for the lease, then another sends it again and records the lost attempt', async () => {
    rx = await startReceiver();
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    // A deliverer claims the first event and dies before sending or recording anything.
    const claimed = await claimDue(
      s.h.db,
      s.h.clock.now(),
      { limit: 10, held: new Map(), perShop: 4, shopId: s.shop.shop.id },
      LEASE_MS,
    );
    expect(claimed.map((r) => r.event)).toEqual(['created.subscription']);

    // Held: neither it nor (in order) the event after it goes while the lease lasts.
    expect(await s.deliver()).toMatchObject({ attempts: 0 });
    // Leases run on real time: moving the test shop's clock on does not free it either.
    expect((await s.api.post('/test_clock/advance', { by: 'PT1H' })).status).toBe(200);
    expect(await s.deliver()).toMatchObject({ attempts: 0 });
    await withClock(s.h, LEASE_MS - 1000, async () => {
      expect(await s.deliver()).toMatchObject({ attempts: 0 });
    });
    // The lease has run out: it is sent again, as attempt 2, and the subscription's next event follows.
    await withClock(s.h, LEASE_MS + 1000, async () => {
      expect(await s.deliver()).toMatchObject({ attempts: 2, delivered: 2 });
    });
    expect(rx.received.map((r) => r.json.event)).toEqual(['created.subscription', 'activated.subscription']);
    const [created] = (await s.api.get(`/notifications?resource_id=${sub}&event=created.subscription`)).body;
    const one = (await s.api.get(`/notifications/${created.id}`)).body;
    expect(one).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(one.attempts).toMatchObject([
      { n: 1, status_code: null, error: 'no answer recorded: the process sending it stopped' },
      { n: 2, status_code: 200, error: null },
    ]);
  });
});
