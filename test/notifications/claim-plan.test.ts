import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Statement } from '../../src/db/db.js';
import { deliveriesOf } from '../../src/notifications/outbox.js';
import {
  type AttemptRecord,
  type ClaimFilter,
  claimBatch,
  type Next,
  outcomeStatements,
  outcomesStatements,
} from '../../src/notifications/queue.js';
import { freshPostgresUrl } from '../fresh-store.js';
import { explainAnalyze, type PlanReading } from '../plan-reading.js';

/**
 * The deliverers' claim after a receiver outage: one shop with a backlog of 20,000 notifications
 * (10,000 subscriptions, each a `created` and then a `renewed`), written in bulk as an outage leaves
 * them and with the statistics of `deliveries` never collected, as on a store without autovacuum or
 * before its next visit. EXPLAIN (ANALYZE, BUFFERS) of the claim itself, with the settings it runs
 * with, must show it reading rows in proportion to what it claims, not to the backlog: before, such
 * a claim read the backlog whole (a probe of every pending row of the shop for each due row) and
 * took seconds.
 *
 * PostgreSQL only: the test needs a database of its own whose statistics were never collected and
 * 20,000 rows written in bulk, which the PostgreSQL run makes in a fraction of a second from its
 * migrated template; the embedded store runs the same statement with the same settings in the other
 * notification tests.
 */

const BACKLOG = 20_000;
const LEASE_MS = 60_000;
/** Rows the claim may read for each row it claims. */
const ROWS_PER_CLAIMED = 50;
const now = new Date('2026-11-28T12:00:00Z');

interface Store {
  client: pg.Client;
  /** The shop with the backlog, and another with ten notifications written after all of those. */
  big: number;
  small: number;
}

async function seed(client: pg.Client): Promise<Pick<Store, 'big' | 'small'>> {
  const shops = await client.query<{ id: number }>(
    `INSERT INTO shops (name, secret_hash, public_key, private_key_enc, created_at)
     SELECT 'Shop ' || g, 'x', 'pk', 'enc', $1 FROM generate_series(1, 2) g ORDER BY g RETURNING id`,
    [now],
  );
  const [big, small] = shops.rows.map((r) => r.id) as [number, number];
  // The outbox's own statement makes each event's delivery (deliveriesOf), as a change announced
  // through it would; events of a subscription one after the other, a millisecond apart.
  const announce = (shop: number, count: number, perResource: number, from: string) =>
    client.query(
      `WITH announced AS (
         INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url, mail_status)
         SELECT $1::int, 'subscription', 'sbs_' || $1::int || '_' || ((g + $3::int - 1) / $3::int),
           CASE WHEN (g - 1) % $3::int = 0 THEN 'created.subscription' ELSE 'renewed.subscription' END,
           jsonb_build_object('id', 'sbs_' || g, 'pad', repeat('x', 500)),
           $4::timestamptz + g * interval '1 millisecond', 'http://127.0.0.1:9/hook', 'done'
         FROM generate_series(1, $2::int) g ORDER BY g
         RETURNING id, shop_id, resource_id, url, created_at
       )
       ${deliveriesOf('announced')}`,
      [shop, count, perResource, from],
    );
  await announce(big, BACKLOG, 2, '2026-11-28T10:00:00Z');
  await announce(small, 10, 1, '2026-11-28T11:00:00Z');
  return { big, small };
}

async function openStore(analyseEmpty: boolean): Promise<Store> {
  const client = new pg.Client({ connectionString: await freshPostgresUrl() });
  await client.connect();
  // Statistics taken while the queue was empty: they say it is nearly empty, as after a quiet night.
  if (analyseEmpty) await client.query('ANALYZE deliveries; ANALYZE events; ANALYZE shops');
  return { client, ...(await seed(client)) };
}

/** EXPLAIN (ANALYZE, BUFFERS) of the claim, in a transaction rolled back after. */
async function explainClaim(s: Store, filter: ClaimFilter): Promise<PlanReading> {
  const batch = claimBatch(now, filter, LEASE_MS);
  const claim = batch.at(-1) as Statement;
  await s.client.query('BEGIN');
  try {
    for (const setting of batch.slice(0, -1)) await s.client.query(setting.sql);
    return await explainAnalyze(s.client, claim.sql, claim.params ?? []);
  } finally {
    await s.client.query('ROLLBACK');
  }
}

/** The claim itself (rolled back): the events it took. */
async function claimedEvents(s: Store, filter: ClaimFilter): Promise<{ shop_id: number; event: string }[]> {
  const batch = claimBatch(now, filter, LEASE_MS);
  await s.client.query('BEGIN');
  try {
    let rows: { shop_id: number; event: string }[] = [];
    for (const st of batch) rows = (await s.client.query(st.sql, st.params as unknown[])).rows;
    return rows;
  } finally {
    await s.client.query('ROLLBACK');
  }
}

/** Why the embedded store skips it, shown with the skipped tests. */
const POSTGRES_ONLY =
  'PostgreSQL only: needs a database of its own, with 20,000 rows written in bulk and statistics never collected';

describe.skipIf(!process.env.DATABASE_URL)(
  `the claim's plan with one shop's backlog (${POSTGRES_ONLY})`,
  () => {
    const stores: { name: string; store: Store }[] = [];
    beforeAll(async () => {
      stores.push({ name: 'statistics never collected', store: await openStore(false) });
      stores.push({ name: 'statistics of an empty queue', store: await openStore(true) });
    });
    afterAll(async () => {
      for (const { store } of stores) await store.client.end();
    });

    const all: ClaimFilter = { limit: 64, held: new Map(), perShop: 64 };

    it('claims from a backlog of 20,000 reading fewer than 50 rows per claimed row, oldest of each subscription only', async () => {
      for (const { name, store } of stores) {
        const plan = await explainClaim(store, all);
        expect(plan.claimed, name).toBe(64);
        expect(plan.rowsRead / plan.claimed, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED);
        const claimed = await claimedEvents(store, all);
        // The oldest 64 due are the big shop's; of each subscription its `created` only, the
        // `renewed` waits for it.
        expect(claimed, name).toHaveLength(64);
        for (const row of claimed) {
          expect(row, name).toMatchObject({ shop_id: store.big, event: 'created.subscription' });
        }
      }
    });

    it("reaches another shop's notifications without reading through a shop that holds all its slots", async () => {
      for (const { name, store } of stores) {
        const busy: ClaimFilter = { limit: 64, held: new Map([[store.big, 4]]), perShop: 4 };
        const plan = await explainClaim(store, busy);
        // The other shop's first four (its own share), though the big shop's 20,000 come first.
        expect(plan.claimed, name).toBe(4);
        expect(plan.rowsRead / plan.claimed, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED);
        const claimed = await claimedEvents(store, busy);
        expect(new Set(claimed.map((r) => r.shop_id)), name).toEqual(new Set([store.small]));
      }
    });

    it('a shop with two slots left is given two, however long its queue', async () => {
      for (const { name, store } of stores) {
        const filter: ClaimFilter = {
          limit: 64,
          held: new Map([[store.big, 2]]),
          perShop: 4,
          shopId: store.big,
        };
        const plan = await explainClaim(store, filter);
        expect(plan.claimed, name).toBe(2);
        expect(plan.rowsRead / plan.claimed, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED);
      }
    });

    it("records outcomes by reading the deliveries they settle, not the shop's backlog", async () => {
      for (const { name, store } of stores) {
        const { rows } = await store.client.query<{ event_id: string }>(
          `SELECT event_id FROM deliveries WHERE shop_id = $1 ORDER BY event_id LIMIT 8`,
          [store.big],
        );
        const outcomes = rows.map((r, i) => ({
          record: {
            eventId: Number(r.event_id),
            shopId: store.big,
            n: 1,
            seriesFrom: 0,
            at: now,
            statusCode: i % 2 === 0 ? 200 : 503,
            durationMs: 3,
            response: null,
            error: null,
          } satisfies AttemptRecord,
          next: (i % 2 === 0 ? { kind: 'delivered' } : { kind: 'retry', at: now }) as Next,
        }));
        const first = outcomes[0] as (typeof outcomes)[number];
        // One outcome on its own (its attempt, then its delivery), and eight written together.
        for (const statements of [
          outcomeStatements(first.record, first.next),
          outcomesStatements(outcomes),
        ]) {
          const settle = statements.at(-1) as Statement;
          await store.client.query('BEGIN');
          try {
            for (const st of statements.slice(0, -1))
              await store.client.query(st.sql, st.params as unknown[]);
            const plan = await explainAnalyze(store.client, settle.sql, settle.params ?? []);
            // Fewer than 50 rows for each delivery settled (eight at most).
            expect(plan.rowsRead, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED * 8);
          } finally {
            await store.client.query('ROLLBACK');
          }
        }
      }
    });

    it('reads as little once the statistics are collected', async () => {
      const store = stores[0]?.store as Store;
      await store.client.query('ANALYZE deliveries; ANALYZE events; ANALYZE shops');
      const plan = await explainClaim(store, all);
      expect(plan.claimed).toBe(64);
      expect(plan.rowsRead / plan.claimed, plan.describe()).toBeLessThan(ROWS_PER_CLAIMED);
    });
  },
);
