import { beforeAll, describe, expect, it } from 'vitest';
import { type Announcement, eventsInsert, FEW_EVENTS } from '../../src/notifications/outbox.js';
import { type Harness, harness, newShop } from '../harness.js';

/**
 * Events written together keep the order they were given, whichever of its two forms the statement
 * takes: a VALUES list for a few (a create's), arrays for a batch (billing's). Each gets its e-mail
 * status from its shop, and a delivery when it has a URL.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const announcement = (shopId: number, i: number, url: string | null): Announcement => ({
  shopId,
  resourceType: 'subscription',
  resourceId: `sbs_order${i}`,
  event: i % 2 === 0 ? 'renewed.subscription' : 'failed.subscription',
  payload: { id: `sbs_order${i}`, n: i, note: 'quote " and backslash \\ and {braces}, commas' },
  url,
  now: new Date(Date.UTC(2026, 10, 27, 12, 0, i)),
});

describe('events written together', () => {
  for (const count of [1, 2, FEW_EVENTS, FEW_EVENTS + 1, 12]) {
    it(`keep their order, payloads, statuses and deliveries: ${count} at once`, async () => {
      const { shop } = await newShop(h);
      const list = Array.from({ length: count }, (_, i) =>
        announcement(shop.id, i, i % 3 === 0 ? `http://127.0.0.1:9/hook/${i}` : null),
      );
      const statement = eventsInsert(list);
      expect(statement.sql.includes('unnest(')).toBe(count > FEW_EVENTS);
      await h.db.tx(async (tx) => {
        await tx.query(statement);
      });
      const rows = await h.db.query<{
        id: number;
        resource_id: string;
        event: string;
        payload: Record<string, unknown>;
        created_at: Date;
        url: string | null;
        mail_status: string;
      }>(
        'SELECT id, resource_id, event, payload, created_at, url, mail_status FROM events WHERE shop_id = $1 ORDER BY id',
        [shop.id],
      );
      expect(rows.map((r) => r.resource_id)).toEqual(list.map((a) => a.resourceId));
      expect(rows.map((r) => r.event)).toEqual(list.map((a) => a.event));
      expect(rows.map((r) => r.payload)).toEqual(list.map((a) => a.payload));
      expect(rows.map((r) => new Date(r.created_at).getTime())).toEqual(list.map((a) => a.now.getTime()));
      expect(rows.map((r) => r.url)).toEqual(list.map((a) => a.url));
      // A new shop sends no e-mail: its events are written done.
      expect(new Set(rows.map((r) => r.mail_status))).toEqual(new Set(['done']));
      const deliveries = await h.db.query<{ event_id: number; status: string }>(
        'SELECT event_id, status FROM deliveries WHERE shop_id = $1 ORDER BY event_id',
        [shop.id],
      );
      expect(deliveries.map((d) => Number(d.event_id))).toEqual(
        rows.filter((r) => r.url !== null).map((r) => Number(r.id)),
      );
      expect(new Set(deliveries.map((d) => d.status))).toEqual(new Set(['pending']));
    });
  }
});
