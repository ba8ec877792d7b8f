import type { Statement } from '../db/db.js';

/**
 * The outbox: every change that a shop is told about writes an event row here, in the same
 * transaction as the change. Deliverers only read it. An event with a URL waits to be delivered
 * there (status `pending`); one without is kept for the record (and for e-mail).
 */

export type ResourceType = 'subscription' | 'transaction' | 'checkout' | 'proof';

export interface Announcement {
  shopId: number;
  resourceType: ResourceType;
  resourceId: string;
  /** e.g. `renewed.subscription`. */
  event: string;
  /** The body to deliver, exactly: the API's own object for the resource plus `event`. */
  payload: Record<string, unknown>;
  /** The resource's notification_url when it happened; null: nothing to deliver over HTTP. */
  url: string | null;
  now: Date;
}

const INSERT = `INSERT INTO events
  (shop_id, resource_type, resource_id, event, payload, created_at, url, status, next_attempt_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;

/** The statement that announces `a`, to run in the transaction of the change it announces. */
export function eventInsert(a: Announcement): Statement {
  const deliver = a.url !== null && a.url !== '';
  return {
    sql: INSERT,
    params: [
      a.shopId,
      a.resourceType,
      a.resourceId,
      a.event,
      JSON.stringify(a.payload),
      a.now,
      deliver ? a.url : null,
      deliver ? 'pending' : 'none',
      deliver ? a.now : null,
    ],
  };
}

const INSERT_MANY = `INSERT INTO events
  (shop_id, resource_type, resource_id, event, payload, created_at, url, status, next_attempt_at)
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::jsonb[], $6::timestamptz[],
    $7::text[], $8::text[], $9::timestamptz[])`;

/** One statement announcing many events in order (the billing engine's batches). */
export function eventsInsert(list: readonly Announcement[]): Statement {
  const columns: unknown[][] = [[], [], [], [], [], [], [], [], []];
  for (const a of list) {
    const params = eventInsert(a).params as unknown[];
    for (let i = 0; i < columns.length; i++) (columns[i] as unknown[]).push(params[i]);
  }
  return { sql: INSERT_MANY, params: columns };
}
