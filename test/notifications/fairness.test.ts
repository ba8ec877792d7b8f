import { afterAll, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notifications/deliver.js';
import { notifyShop, type Receiver, startReceiver } from './receiver.js';

/**
 * A shop whose receiver hangs holds only its own share of the deliverers' slots: another shop's
 * notifications go through while the first shop's wait for their timeout.
 */

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

describe('fairness between shops', () => {
  it("a hanging receiver of one shop never holds up another shop's notifications", async () => {
    const dead = await startReceiver(() => ({ status: 200, hang: true }));
    receivers.push(dead);
    // What the dead receiver had been sent when the healthy one got each request.
    const seenByDead: number[] = [];
    const alive = await startReceiver(() => {
      seenByDead.push(dead.received.length);
      return { status: 200 };
    });
    receivers.push(alive);
    const slow = await notifyShop();
    const fast = await notifyShop();
    for (let i = 0; i < 6; i++) await slow.subscribe(dead.url);
    for (let i = 0; i < 3; i++) await fast.subscribe(alive.url);

    const summary = await deliverDue(slow.h.app.services, {
      shopId: [slow.shop.shop.id, fast.shop.shop.id],
      limits: { total: 8, perShop: 4 },
      timeoutMs: 1500,
    });
    // The healthy shop's six notifications (created, then activated, of three subscriptions) all
    // went while the dead receiver held at most its shop's four slots: its fifth notification goes
    // only when one of the first four has timed out, and none had.
    expect(alive.received).toHaveLength(6);
    expect(seenByDead).toHaveLength(6);
    for (const n of seenByDead) expect(n).toBeLessThanOrEqual(4);
    expect(dead.received).toHaveLength(6);
    expect(summary).toEqual({ attempts: 12, delivered: 6, retrying: 6, failed: 0 });
  });
});
