import type { Queryable } from '../../db/db.js';
import {
  type ChargeAttemptRow,
  chargeAttempts,
  type DeliveryAttemptRow,
  deliveryAttempts,
  type EventRow,
  eventsAbout,
} from './repository.js';

/**
 * A subscription's history as one list, newest first: its charge attempts, and the events it
 * announced (each a state change or a renewal) with their webhook delivery attempts. A subscription
 * billed hourly for years has thousands of each, so the newest TIMELINE_LIMIT of each are read.
 */

export const TIMELINE_LIMIT = 100;

export type TimelineItem =
  | { kind: 'charge'; at: Date; charge: ChargeAttemptRow }
  | { kind: 'event'; at: Date; event: EventRow; attempts: DeliveryAttemptRow[] };

export interface Timeline {
  items: TimelineItem[];
  /** Whether older charges or events exist beyond what is shown. */
  cut: boolean;
}

// At one instant (a charge and the events its answer caused share it) the events come after the
// charge, and the subscription's creation before everything.
function rank(item: TimelineItem): number {
  if (item.kind === 'charge') return 1;
  return item.event.event === 'created.subscription' ? 0 : 2;
}

function order(a: TimelineItem, b: TimelineItem): number {
  const byTime = b.at.getTime() - a.at.getTime();
  if (byTime !== 0) return byTime;
  const byRank = rank(b) - rank(a);
  if (byRank !== 0) return byRank;
  if (a.kind === 'event' && b.kind === 'event') return b.event.id - a.event.id;
  if (a.kind === 'charge' && b.kind === 'charge') {
    return b.charge.period - a.charge.period || b.charge.attempt - a.charge.attempt;
  }
  return 0;
}

export async function timelineOf(db: Queryable, shopId: number, subscriptionId: string): Promise<Timeline> {
  const charges = await chargeAttempts(db, shopId, subscriptionId, TIMELINE_LIMIT + 1);
  const shownCharges = charges.slice(0, TIMELINE_LIMIT);
  const uids = shownCharges.map((c) => c.transaction_uid).filter((u): u is string => u !== null);
  const events = await eventsAbout(db, shopId, [subscriptionId, ...uids], TIMELINE_LIMIT + 1);
  const shownEvents = events.slice(0, TIMELINE_LIMIT);
  const attempts = await deliveryAttempts(
    db,
    shownEvents.map((e) => Number(e.id)),
  );
  const byEvent = new Map<number, DeliveryAttemptRow[]>();
  for (const a of attempts) {
    const list = byEvent.get(Number(a.event_id)) ?? [];
    list.push(a);
    byEvent.set(Number(a.event_id), list);
  }
  const items: TimelineItem[] = [
    ...shownCharges.map((charge) => ({ kind: 'charge' as const, at: new Date(charge.created_at), charge })),
    ...shownEvents.map((event) => ({
      kind: 'event' as const,
      at: new Date(event.created_at),
      event,
      attempts: byEvent.get(Number(event.id)) ?? [],
    })),
  ];
  items.sort(order);
  return { items, cut: charges.length > TIMELINE_LIMIT || events.length > TIMELINE_LIMIT };
}
