import type { RowsShape, Statement } from '../db/db.js';
import { shaped } from '../db/rows.js';

/**
 * The outbox: every change that a shop is told about writes an event row here, in the same
 * transaction as the change. An event with a URL is also given a delivery (status `pending`), in the
 * same statement: deliverers change only that narrow row, never the event. One without a URL is
 * kept for the record (and for e-mail).
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

/** The columns an event is written with, in the order of eventInsert's parameters. */
export const EVENT_COLUMNS = [
  'shop_id',
  'resource_type',
  'resource_id',
  'event',
  'payload',
  'created_at',
  'url',
] as const;

/**
 * The delivery of each event that `source` (a CTE holding inserted events) yields with a URL: due
 * at once, at its creation on the shop's clock.
 */
export const deliveriesOf = (source: string) => `INSERT INTO deliveries
  (event_id, shop_id, resource_id, status, next_attempt_at)
  SELECT id, shop_id, resource_id, 'pending', created_at FROM ${source} WHERE url IS NOT NULL`;

/**
 * An event's e-mail status as it is written, from its shop's setting: 'pending' when the shop sends
 * e-mails, so that the fan-out (mail/fanout.ts) takes it, else 'done'. Most shops send none, and
 * their events are then never locked and rewritten by the fan-out (a second version of every row,
 * its indexes and its payload, for nothing). A shop that turns e-mail on gets e-mails for the events
 * written from then on; one that turns it off stops those still waiting (the fan-out checks again).
 * `shopId` is the SQL of the event's shop id.
 */
export const mailStatusOf = (shopId: string) =>
  `COALESCE((SELECT CASE WHEN s.email_notifications THEN 'pending' ELSE 'done' END FROM shops s WHERE s.id = ${shopId}), 'pending')`;

/** The columns an event is written with: EVENT_COLUMNS, then its e-mail status (mailStatusOf). */
export const EVENT_INSERT_COLUMNS = [...EVENT_COLUMNS, 'mail_status'].join(', ');

const INSERT = `WITH announced AS (
    INSERT INTO events (${EVENT_INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, ${mailStatusOf('$1')})
    RETURNING id, shop_id, resource_id, url, created_at
  )
  ${deliveriesOf('announced')}`;

/** Whether `a` is delivered over HTTP: it has a URL, and its event a delivery, due at once. */
export const delivered = (a: Announcement): boolean => a.url !== null && a.url !== '';

/**
 * The statement that announces `a`, to run in the transaction of the change it announces. Run it as
 * a statement (`query(s)`, a batch), not as bare text: it wakes the deliverer when it made a delivery.
 */
export function eventInsert(a: Announcement): Statement {
  const deliver = delivered(a);
  return {
    wakes: deliver,
    sql: INSERT,
    params: [
      a.shopId,
      a.resourceType,
      a.resourceId,
      a.event,
      JSON.stringify(a.payload),
      a.now,
      deliver ? a.url : null,
    ],
  };
}

/** The SQL types of EVENT_COLUMNS, in their order. */
const TYPES = ['int', 'text', 'text', 'text', 'jsonb', 'timestamptz', 'text'] as const;

/**
 * The events of `rows` (EVENT_COLUMNS, then `n`, their place in the list), inserted in that order
 * (ORDER BY n: the identity numbers them so), each with its delivery when it has a URL.
 */
const insertFrom = (rows: string) => `WITH announced AS (
    INSERT INTO events (${EVENT_INSERT_COLUMNS})
    SELECT ${EVENT_COLUMNS.join(', ')}, ${mailStatusOf('a.shop_id')}
    FROM ${rows} AS a (${EVENT_COLUMNS.join(', ')}, n)
    ORDER BY n
    RETURNING id, shop_id, resource_id, url, created_at
  )
  ${deliveriesOf('announced')}`;

/** Any number of events, a parameter array per column (the billing engine's batches). */
const INSERT_MANY = insertFrom(
  `unnest(${TYPES.map((type, c) => `$${c + 1}::${type}[]`).join(', ')}) WITH ORDINALITY`,
);

/**
 * Up to this many events go as rows of a VALUES list, one parameter a value, rather than as arrays.
 * PostgreSQL plans a prepared statement over `unnest` of parameter arrays anew at every execution (a
 * generic plan cannot know the arrays' length, so it never looks cheaper than a custom one), and
 * both sides pay to write and parse the arrays; a VALUES list of a known length gets the generic
 * plan after five executions. A subscription's create writes two events, a renewal batch hundreds.
 */
export const FEW_EVENTS = 4;

/**
 * Events as the rows of a VALUES list (EVENT_COLUMNS, then `n`, the row's place): a create's few, and
 * the events of a group of writes (db/rows.ts), whose statements merge into one.
 */
const EVENT_ROWS: RowsShape = {
  key: 'events',
  arity: TYPES.length,
  tuple: (first, index) => `(${TYPES.map((type, c) => `$${first + c}::${type}`).join(', ')}, ${index + 1})`,
  around: (tuples) => insertFrom(`(VALUES ${tuples})`),
};

/** One statement announcing many events in order (a create's few, or the billing engine's batches). */
export function eventsInsert(list: readonly Announcement[]): Statement {
  const wakes = list.some(delivered);
  if (list.length > 0 && list.length <= FEW_EVENTS)
    return shaped(
      EVENT_ROWS,
      list.flatMap((a) => eventInsert(a).params as unknown[]),
      wakes,
    );
  const columns: unknown[][] = EVENT_COLUMNS.map(() => []);
  for (const a of list) {
    const params = eventInsert(a).params as unknown[];
    for (let i = 0; i < columns.length; i++) (columns[i] as unknown[]).push(params[i]);
  }
  return { sql: INSERT_MANY, params: columns, wakes };
}
