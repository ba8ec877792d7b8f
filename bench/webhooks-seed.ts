/**
 * The webhook benchmark's store: a fresh schema holding a backlog of `count` notifications due now.
 *
 * `shops` test shops are made through Kopek's own verb, each with its own RSA key pair (a shop signs
 * its notifications with its own key, so a deliverer cannot sign with one key for all). One
 * subscription of the first shop is made through POST /subscriptions' verb with a notification_url
 * pointing at the benchmark's receiver: its `created.subscription` event is the model. The other
 * events are SQL copies of it (INSERT … SELECT over generate_series), spread over `count /
 * perResource` subscriptions, each with `perResource` events (its `created`, then `renewed`), and
 * those subscriptions over the shops in turn. Each copy names its own subscription id, in its
 * resource_id and in its payload. A subscription's events must go out in order, so its second event
 * becomes due only once its first is delivered: the copies keep the two apart in the queue (all
 * first events, then all second events), as a backlog of many subscriptions has them.
 *
 * Only the events are copied: delivery reads nothing else of a subscription. They are marked as
 * already turned into e-mails (mail_status `done`), so that a `kopek serve` on this store would do
 * only their webhooks.
 *
 * The store's statistics are then collected (VACUUM ANALYZE), as on a store that has been running a
 * while; or, with `statistics: 'never'`, never collected, and autovacuum is kept away from the
 * tables for the run: the queue as a burst leaves it before autovacuum's next visit (the backlog
 * case).
 */
import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import type { Services } from '../src/context.js';
import { migrate } from '../src/db/migrate.js';
import { createPostgresDb } from '../src/db/postgres.js';
import { createShop, type SigningKeys } from '../src/shops/service.js';
import { createSubscription } from '../src/subscriptions/service.js';

export interface SeededWebhooks {
  /** Notifications due, the model included. */
  count: number;
  /** The shops' ids, and each one's public key (to check signatures). */
  shops: { id: number; publicKey: string }[];
  /** Subscriptions the events are spread over. */
  resources: number;
  /** The event made through the verbs, and its subscription; the copies are of them. */
  modelEventId: number;
  originalId: string;
  /** When the backlog was written (its events' created_at and next_attempt_at). */
  createdAt: Date;
  masterKeyHex: string;
}

/** The tables whose statistics the deliverers' plans depend on. */
const STATISTICS_TABLES = ['events', 'deliveries', 'event_attempts', 'shops'];

const quoteLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

const silentLog = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

const keyPair = promisify(generateKeyPair);

/** RSA-2048 key pairs as Kopek makes them, generated on the thread pool (both cores at once). */
async function signingKeys(n: number): Promise<SigningKeys[]> {
  return Promise.all(
    Array.from({ length: n }, () =>
      keyPair('rsa', {
        modulusLength: 2048,
        publicKeyEncoding: { type: 'spki', format: 'pem' },
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      }),
    ),
  );
}

/**
 * A SQL expression for the subscription id number `r` (0 is the original): same prefix, same length,
 * same alphabet, derived from the original id.
 */
function subscriptionIdOf(original: string, r: string): string {
  const cut = original.indexOf('_') + 1;
  const rest = original.length - cut;
  if (rest > 32) throw new Error(`cannot copy the id ${original}: longer than an md5`);
  const o = quoteLiteral(original);
  return `CASE WHEN ${r} = 0 THEN ${o} ELSE ${quoteLiteral(original.slice(0, cut))} || left(md5(${o} || ${r}), ${rest}) END`;
}

/** The event names of a subscription's events in turn: its creation, then renewals. */
const EVENT_NAMES = ['created.subscription', 'renewed.subscription'];

/**
 * Events 2..`to` of the backlog (event 1 is the model): event i belongs to subscription (i - 1) mod
 * `resources`, is its ((i - 1) div `resources`)-th event, and goes to shop number
 * (subscription mod `shops`). Returns how many rows were written.
 */
export async function copyEvents(
  db: { query: <R>(sql: string, params?: unknown[]) => Promise<R[]> },
  opts: {
    modelEventId: number;
    originalId: string;
    shopIds: number[];
    from: number;
    to: number;
    resources: number;
    /** A SQL expression for the copies' created_at (when their deliveries are due). */
    at: string;
  },
): Promise<number> {
  const r = '((i - 1) % $2::bigint)';
  const k = '((i - 1) / $2::bigint)';
  const id = subscriptionIdOf(opts.originalId, r);
  const original = quoteLiteral(opts.originalId);
  const names = `(ARRAY[${EVENT_NAMES.map(quoteLiteral).join(', ')}])`;
  const [row] = await db.query<{ n: number }>(
    `WITH model AS MATERIALIZED (SELECT * FROM events WHERE id = $1),
     copied AS (
       INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url, mail_status)
       SELECT ($3::int[])[1 + ${r} % cardinality($3::int[])], m.resource_type, ${id},
         ${names}[1 + least(${k}, ${EVENT_NAMES.length - 1})],
         jsonb_set(replace(m.payload::text, ${original}, ${id})::jsonb, '{event}',
           to_jsonb(${names}[1 + least(${k}, ${EVENT_NAMES.length - 1})])),
         ${opts.at}, m.url, 'done'
       FROM model m, generate_series($4::bigint, $5::bigint) AS i
       ORDER BY i
       RETURNING id, shop_id, resource_id, url, created_at
     ), queued AS (
       INSERT INTO deliveries (event_id, shop_id, resource_id, status, next_attempt_at)
       SELECT id, shop_id, resource_id, 'pending', created_at FROM copied
       RETURNING 1
     ) SELECT count(*)::int AS n FROM queued`,
    [opts.modelEventId, opts.resources, opts.shopIds, opts.from, opts.to],
  );
  return row?.n ?? 0;
}

/**
 * Migrates the schema `dbUrl` points at and fills it: `shops` test shops, and `count` notifications
 * due now to `url`, `perResource` per subscription.
 */
export async function seedWebhooks(
  dbUrl: string,
  opts: {
    count: number;
    shops: number;
    perResource: number;
    url: string;
    /** 'never': no VACUUM ANALYZE, and no autovacuum on the tables delivery reads (default 'collected'). */
    statistics?: 'collected' | 'never';
  },
): Promise<SeededWebhooks> {
  const db = createPostgresDb(dbUrl, 2);
  try {
    await migrate(db);
    const stale = opts.statistics === 'never';
    if (stale) {
      for (const table of STATISTICS_TABLES)
        await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
    const masterKeyHex = randomBytes(32).toString('hex');
    const config = loadConfig({
      DATABASE_URL: dbUrl,
      KOPEK_MASTER_KEY: masterKeyHex,
      LOG_LEVEL: 'silent',
      PUBLIC_URL: 'http://127.0.0.1:1',
    });
    const services: Services = {
      db,
      clock: systemClock,
      config,
      masterKey: Buffer.from(masterKeyHex, 'hex'),
      log: silentLog,
    };
    const made = [];
    for (const keys of await signingKeys(opts.shops)) {
      const { shop } = await createShop(services, {
        name: `Webhooks bench ${made.length + 1}`,
        test: true,
        signingKeys: keys,
      });
      made.push({ shop, publicKey: keys.publicKey });
    }
    const shops = made.map((m) => ({ id: m.shop.id, publicKey: m.publicKey }));
    const shop = made[0]?.shop;
    if (!shop) throw new Error('the benchmark needs at least one shop');
    const sub = await createSubscription(
      { ...services, shop },
      {
        plan: {
          title: 'Benchmark plan',
          currency: 'USD',
          plan: { amount: 999, interval: 1, interval_unit: 'month' },
        },
        customer: { email: 'webhooks@example.com', ip: '203.0.113.7', first_name: 'Bench' },
        tracking_id: 'bench-webhook',
        notification_url: opts.url,
        card: {
          number: '4200000000000000',
          verification_value: '123',
          holder: 'Bench Runner',
          exp_month: '12',
          exp_year: String(new Date().getUTCFullYear() + 3),
        },
      },
    );
    // The model: the subscription's own event. Whatever else the verb announced (its payment's
    // events) is left out of the backlog, so that it holds exactly `count` notifications.
    const [model] = await db.query<{ id: number }>(
      `SELECT e.id FROM events e JOIN deliveries d ON d.event_id = e.id
       WHERE e.resource_id = $1 AND e.event = 'created.subscription' AND d.status = 'pending'`,
      [sub.id],
    );
    if (!model)
      throw new Error(`POST /subscriptions announced no pending created.subscription for ${sub.id}`);
    const modelEventId = Number(model.id);
    await db.query(`DELETE FROM event_attempts WHERE event_id <> $1`, [modelEventId]);
    await db.query(`DELETE FROM deliveries WHERE event_id <> $1`, [modelEventId]);
    await db.query(`DELETE FROM events WHERE id <> $1`, [modelEventId]);
    const [{ now } = { now: new Date() }] = await db.query<{ now: Date }>(
      `UPDATE events SET created_at = now(), mail_status = 'done' WHERE id = $1 RETURNING created_at AS now`,
      [modelEventId],
    );
    await db.query(`UPDATE deliveries SET next_attempt_at = $2 WHERE event_id = $1`, [modelEventId, now]);
    const resources = Math.ceil(opts.count / opts.perResource);
    const copied = await copyEvents(db, {
      modelEventId,
      originalId: sub.id,
      shopIds: shops.map((s) => s.id),
      from: 2,
      to: opts.count,
      resources,
      at: quoteLiteral(now.toISOString()),
    });
    if (copied !== opts.count - 1) throw new Error(`copied ${copied} events, wanted ${opts.count - 1}`);
    // Fresh statistics and visibility maps, as a store that has been running a while has.
    if (!stale) await db.query(`VACUUM ANALYZE ${STATISTICS_TABLES.join(', ')}`);
    return {
      count: opts.count,
      shops,
      resources,
      modelEventId,
      originalId: sub.id,
      createdAt: now,
      masterKeyHex,
    };
  } finally {
    await db.close();
  }
}
