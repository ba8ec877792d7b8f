import { beforeAll, describe, expect, it } from 'vitest';
import { listCustomerPage } from '../../src/cabinet/customers/repository.js';
import {
  dailyTotals,
  failedCharges,
  retryingSubscriptions,
  stateCounts,
  troubledNotifications,
} from '../../src/cabinet/overview/repository.js';
import { window30 } from '../../src/cabinet/overview/routes.js';
import type { ListStore } from '../../src/cabinet/query.js';
import { subscriptionPage } from '../../src/cabinet/subscriptions/repository.js';
import { timelineOf } from '../../src/cabinet/subscriptions/timeline.js';
import type { Db, Queryable, Statement } from '../../src/db/db.js';
import { type Harness, harness, newShop } from '../harness.js';

/**
 * The overview's and the subscriptions list's queries on PostgreSQL, with a shop of many rows
 * beside another as big: each is answered from an index bounded by the shop (and the 30-day window),
 * never by reading a table whole.
 */

const ROWS = 60_000;
const BIG = ['subscriptions', 'transactions', 'events', 'customers', 'plans', 'subscription_charges'];

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode, out: string[] = []): string[] {
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  if (node['Relation Name']) out.push(`${node['Node Type']} on ${node['Relation Name']}${index}`);
  else if (index) out.push(`${node['Node Type']}${index}`);
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

/**
 * A store that records how PostgreSQL runs each statement (a batch's last one after the ones before
 * it: a list's planner settings), then runs it.
 */
function explaining(db: Db, plans: string[][]): ListStore {
  const record = (rows: unknown[]) =>
    plans.push(scans((rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan));
  return {
    async query<R>(sql: string | Statement, params?: readonly unknown[]): Promise<R[]> {
      const s = typeof sql === 'string' ? { sql, params } : sql;
      record(await db.query(`EXPLAIN (FORMAT JSON) ${s.sql}`, s.params));
      return db.query<R>(s.sql, s.params);
    },
    async batch<R>(statements: readonly Statement[]): Promise<R[][]> {
      const last = statements[statements.length - 1] as Statement;
      const explained = await db.batch([
        ...statements.slice(0, -1),
        { ...last, sql: `EXPLAIN (FORMAT JSON) ${last.sql}` },
      ]);
      record(explained[explained.length - 1] as unknown[]);
      return db.batch<R>(statements);
    },
  };
}

export async function seedShop(db: Queryable, shopId: number, rows: number, now: Date): Promise<void> {
  const p = `x${shopId}`;
  await db.query(
    `INSERT INTO plans (id, shop_id, title, currency, amount, "interval", interval_unit, language, infinite,
       number_payment_attempts, test, created_at, updated_at)
     SELECT 'pln_${p}_' || g, $1, 'Plan ' || (g % 50), 'EUR', 1000 + g, 1, 'month', 'en', true, 3, true, $2, $2
     FROM generate_series(1, $3::int) g`,
    [shopId, now, Math.max(1, rows / 50)],
  );
  await db.query(
    `INSERT INTO customers (id, shop_id, email, ip, created_at)
     SELECT 'cst_${p}_' || g, $1, 'c' || g || '@example.com', '203.0.113.1', $2 FROM generate_series(1, $3::int) g`,
    [shopId, now, Math.max(1, rows / 5)],
  );
  await db.query(
    `INSERT INTO subscriptions (id, shop_id, plan_id, customer_id, state, tracking_id, language, billing_anchor,
       billing_day, time_zone, renew_at, number_failed_payment_attempts, cancelled_at, created_at, updated_at)
     SELECT 'sbs_${p}_' || g, $1, 'pln_${p}_' || (1 + g % ($3::int / 50)), 'cst_${p}_' || (1 + g % ($3::int / 5)),
       s.state, 'trk-' || g, 'en', $2, 1, 'UTC',
       CASE WHEN s.state IN ('active', 'trial') THEN $2::timestamptz + make_interval(days => g % 30) END,
       CASE WHEN s.state = 'active' AND g % 101 = 0 THEN 1 ELSE 0 END,
       CASE WHEN s.state IN ('canceled', 'failed', 'error') THEN $2::timestamptz END,
       $2::timestamptz - make_interval(secs => g), $2
     FROM generate_series(1, $3::int) g,
       LATERAL (SELECT (ARRAY['active', 'active', 'active', 'active', 'canceled', 'failed', 'trial', 'error',
         'redirecting'])[1 + g % 9] AS state) s`,
    [shopId, now, rows],
  );
  await db.query(
    `INSERT INTO subscription_charges (subscription_id, period, attempt, amount, currency, status, created_at, updated_at, shop_id)
     SELECT 'sbs_${p}_' || g, 1, 1, 1000, 'EUR', 'successful', $1, $1, $3 FROM generate_series(1, $2::int) g`,
    [now, rows, shopId],
  );
  // A year of payments: the 30-day window is a twelfth of them.
  await db.query(
    `INSERT INTO transactions (uid, shop_id, type, status, message, amount, currency, test, created_at, updated_at)
     SELECT gen_random_uuid(), $1, CASE WHEN g % 10 = 0 THEN 'refund' ELSE 'payment' END,
       CASE WHEN g % 17 = 0 THEN 'failed' ELSE 'successful' END, 'm', 100 + g % 5000,
       CASE WHEN g % 3 = 0 THEN 'USD' ELSE 'EUR' END, true,
       $2::timestamptz - make_interval(secs => g * (31536000 / $3::int)), $2
     FROM generate_series(1, $3::int) g`,
    [shopId, now, rows],
  );
  await db.query(
    `WITH e AS (
       INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url)
       SELECT $1, 'subscription', 'sbs_${p}_' || g, 'renewed.subscription', '{}', $2, 'http://127.0.0.1:9/'
       FROM generate_series(1, $3::int) g
       RETURNING id, shop_id, resource_id
     )
     INSERT INTO deliveries (event_id, shop_id, resource_id, status, attempts)
     SELECT id, shop_id, resource_id, CASE WHEN id % 50 = 0 THEN 'failed' ELSE 'delivered' END, 1 FROM e`,
    [shopId, now, rows],
  );
}

describe.skipIf(!process.env.DATABASE_URL)('cabinet queries on PostgreSQL with many rows', () => {
  let h: Harness;
  let shopId: number;
  const now = new Date('2026-01-15T10:00:00Z');

  beforeAll(async () => {
    h = await harness();
    const shops = [await newShop(h, { name: 'Big shop' }), await newShop(h, { name: 'Big neighbour' })];
    for (const s of shops) await seedShop(h.db, s.shop.id, ROWS, now);
    shopId = shops[0]?.shop.id as number;
    for (const table of BIG) await h.db.query(`VACUUM ANALYZE ${table}`);
  }, 300_000);

  const plansOf = async (run: (db: ListStore) => Promise<unknown>) => {
    const plans: string[][] = [];
    await run(explaining(h.db, plans));
    return plans.flat();
  };
  const expectIndexed = (plans: string[]) => {
    expect(plans.length).toBeGreaterThan(0);
    for (const scan of plans) {
      const table = scan.split(' on ')[1]?.split(' ')[0];
      if (BIG.includes(table as string)) expect(scan).not.toMatch(/^Seq Scan/);
    }
  };

  it('pages and filters the list by index', async () => {
    const filters = [
      {},
      { state: 'failed' },
      { plan: 'Plan 7' },
      { plan: `pln_x${shopId}_7` },
      { email: 'C77@example.com' },
      { email: 'c7' },
      { trackingId: 'trk-500' },
      { id: `sbs_x${shopId}_500` },
      { state: 'active', email: 'c77@example.com' },
    ];
    for (const filter of filters) {
      expectIndexed(await plansOf((db) => subscriptionPage(db, shopId, filter, 50, undefined)));
      expectIndexed(await plansOf((db) => subscriptionPage(db, shopId, filter, 50, 30_000)));
    }
    // A common start walks the newest customers until a page is full; a whole address (or any start
    // that few addresses share) reads its stretch of the e-mail index.
    expectIndexed(await plansOf((db) => listCustomerPage(db, shopId, { email: 'c7' }, undefined, 50)));
    const whole = await plansOf((db) =>
      listCustomerPage(db, shopId, { email: 'C777@example.com' }, undefined, 50),
    );
    expect(whole).toEqual(['Index Scan on customers using customers_shop_email']);
  });

  it('sums the overview from indexes over the shop and the 30 days', async () => {
    const { from, to } = window30(now, 'Europe/Berlin');
    expectIndexed(await plansOf((db) => dailyTotals(db, shopId, from, to, 'Europe/Berlin')));
    expectIndexed(await plansOf((db) => failedCharges(db, shopId, from, 10)));
    expectIndexed(await plansOf((db) => retryingSubscriptions(db, shopId, 10)));
    expectIndexed(await plansOf((db) => troubledNotifications(db, shopId)));
    expectIndexed(await plansOf((db) => stateCounts(db, shopId)));
    expectIndexed(await plansOf((db) => timelineOf(db, shopId, `sbs_x${shopId}_500`)));
  });

  it('gives the same answers the pages show', async () => {
    const counts = await stateCounts(h.db, shopId);
    expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(ROWS);
    const page = await subscriptionPage(h.db, shopId, { email: 'C77@example.com' }, 50, undefined);
    expect(page.length).toBeGreaterThan(0);
    expect(page.every((r) => r.email === 'c77@example.com')).toBe(true);
    const started = await subscriptionPage(h.db, shopId, { email: 'C7' }, 50, undefined);
    expect(started.length).toBeGreaterThan(0);
    expect(started.every((r) => r.email?.startsWith('c7'))).toBe(true);
    expect(new Set(started.map((r) => r.email)).size).toBeGreaterThan(1);
  });
});
