import { describe, expect, it } from 'vitest';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { card, cardBody, subShop } from '../subscriptions/helpers.js';

/**
 * Issue 24, item 7: a notification carries the state the API answered at that moment, whatever path
 * the charge took. A card the in-process gateway decides at once (4200 0000 0000 0000) takes the
 * one-batch path; a card whose outcome depends on its history (4000 0000 0000 0226) is claimed first
 * and recorded after the gateway's answer. Both answer `active`, and both announce the subscription
 * as `active`, then its activation, in the order of the changes.
 */

async function eventsOf(s: Awaited<ReturnType<typeof subShop>>, id: string) {
  return s.h.db.query<{ event: string; state: string }>(
    `SELECT event, payload->>'state' AS state FROM events
     WHERE shop_id = $1 AND resource_type = 'subscription' AND resource_id = $2 ORDER BY id`,
    [s.shop.shop.id, id],
  );
}

describe('events say what the API answered, whichever path the first charge took', () => {
  it.each([
    ['decided at once', '4200000000000000'],
    ['claimed, then recorded', KOPEK_CARDS.firstThenDeclined],
  ])('%s (%s): created.subscription says active, then activated', async (_path, number) => {
    const s = await subShop();
    const res = await s.api.post('/subscriptions', cardBody({ card: card(number) }));
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('active');
    expect(await eventsOf(s, res.body.id)).toEqual([
      { event: 'created.subscription', state: 'active' },
      { event: 'activated.subscription', state: 'active' },
    ]);
  });

  it('a first charge the gateway declines announces the subscription as the API answered it, then its end', async () => {
    const s = await subShop();
    const res = await s.api.post('/subscriptions', cardBody({ card: card('4005550000000019') }));
    expect(res.status).toBe(201);
    const events = await eventsOf(s, res.body.id);
    expect(events[0]).toEqual({ event: 'created.subscription', state: res.body.state });
    expect(events.map((e) => e.event)).toEqual([
      'created.subscription',
      'failed.subscription',
      'canceled.subscription',
    ]);
  });
});
