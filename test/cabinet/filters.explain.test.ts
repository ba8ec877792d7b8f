import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCustomerPage } from '../../src/cabinet/customers/repository.js';
import { listEmailPage } from '../../src/cabinet/emails/repository.js';
import { listPayments } from '../../src/cabinet/payments/repository.js';
import { listProductPage } from '../../src/cabinet/products/repository.js';
import { indexWalking, type ListStore } from '../../src/cabinet/query.js';
import { type SubscriptionListFilter, subscriptionPage } from '../../src/cabinet/subscriptions/repository.js';
import { shopCtx } from '../../src/context.js';
import type { Db, Queryable, Statement } from '../../src/db/db.js';
import { listNotifications } from '../../src/notifications/index.js';
import { createShop } from '../../src/shops/service.js';
import { freshStore } from '../fresh-store.js';
import { type Harness, harness } from '../harness.js';
import { shopSigningKeys } from '../signing-keys.js';

/**
 * Every filter of the cabinet's lists reads rows in proportion to the page it returns, whatever the
 * planner's statistics say. One shop has 20,000 customers of one e-mail address (and 2,000 of others),
 * 10,000 subscriptions, 10,000 payments, 5,000 products, 5,000 e-mails and 5,000 notifications, written with bulk
 * SQL; the statistics are those of the store before (never collected on the embedded store, on
 * PostgreSQL taken while the tables were as small as the store began, autovacuum being off). Each
 * statement the list runs is run again under EXPLAIN (ANALYZE, BUFFERS): the rows its scans read
 * (returned and removed by a filter, times their loops) stay within a few pages' worth, where the
 * plans this replaced read the shop's 20,000 customers (4.4 s on the store a scanner had filled).
 */

const PAGE = 50;
const LIMIT = PAGE + 1;
/** Rows a filter may read for one page: the page a few times over, and the lookups beside it. */
const BUDGET = 12 * LIMIT + 100;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the plan's scans read: returned or removed by a filter, in every loop. */
function rowsRead(node: PlanNode): number {
  const loops = node['Actual Loops'] ?? 1;
  const scan = /Scan/.test(node['Node Type']) && node['Node Type'] !== 'Subquery Scan';
  const removed =
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0) +
    (node['Rows Removed by Join Filter'] ?? 0);
  const own = (scan ? (node['Actual Rows'] ?? 0) : 0) + removed;
  return own * loops + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child), 0);
}

function describePlan(node: PlanNode, depth = 0): string {
  const what = `${node['Node Type']}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}${
    node['Index Name'] ? ` using ${node['Index Name']}` : ''
  } rows=${node['Actual Rows']} loops=${node['Actual Loops']} removed=${node['Rows Removed by Filter'] ?? 0}`;
  return [`${'  '.repeat(depth)}${what}`, ...(node.Plans ?? []).map((c) => describePlan(c, depth + 1))].join(
    '\n',
  );
}

interface Measured {
  sql: string;
  read: number;
  plan: string;
}

const EXPLAIN = 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ';

function record(out: Measured[], sql: string, rows: unknown[]): void {
  const raw = (rows[0] as { 'QUERY PLAN': unknown })['QUERY PLAN'];
  const doc = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
  out.push({ sql, read: rowsRead(doc[0].Plan), plan: describePlan(doc[0].Plan) });
}

/**
 * A store that runs each statement and also explains it, keeping what each plan read. A batch's
 * last statement is explained after the ones before it (a list's planner settings), as the list runs it.
 */
function measuring(db: Db, out: Measured[]): ListStore {
  return {
    async query<R>(sql: string | Statement, params?: readonly unknown[]): Promise<R[]> {
      const s = typeof sql === 'string' ? { sql, params } : sql;
      record(out, s.sql, await db.query(`${EXPLAIN}${s.sql}`, s.params));
      return db.query<R>(s.sql, s.params);
    },
    async batch<R>(statements: readonly Statement[]): Promise<R[][]> {
      const last = statements[statements.length - 1] as Statement;
      const explained = await db.batch([
        ...statements.slice(0, -1),
        { ...last, sql: `${EXPLAIN}${last.sql}` },
      ]);
      record(out, last.sql, explained[explained.length - 1] as unknown[]);
      return db.batch<R>(statements);
    },
  };
}

const BIG = [
  'products',
  'customers',
  'plans',
  'subscriptions',
  'transactions',
  'emails',
  'events',
  'deliveries',
];

async function seed(db: Queryable, shopId: number, now: Date): Promise<void> {
  const p = `f${shopId}`;
  await db.query(
    `INSERT INTO plans (id, shop_id, title, currency, amount, "interval", interval_unit, language, infinite,
       number_payment_attempts, test, created_at, updated_at)
     SELECT 'pln_${p}_' || g, $1, CASE WHEN g = 1 THEN 'Gold' ELSE 'Plan ' || g END, 'EUR', 1000 + g, 1,
       'month', 'en', true, 3, true, $2, $2
     FROM generate_series(1, 20) g`,
    [shopId, now],
  );
  // 20,000 customers of one address and 2,000 of others among them (every eleventh).
  await db.query(
    `INSERT INTO customers (id, shop_id, email, ip, created_at)
     SELECT 'cst_${p}_' || g, $1, CASE WHEN g % 11 = 0 THEN 'c' || (g / 11) || '@example.com' ELSE 'jane@example.com' END,
       '203.0.113.1', $2
     FROM generate_series(1, 22000) g`,
    [shopId, now],
  );
  // 10,000 subscriptions of every other customer; every twentieth plan is Gold.
  await db.query(
    `INSERT INTO subscriptions (id, shop_id, plan_id, customer_id, state, tracking_id, language, billing_anchor,
       billing_day, renew_at, number_failed_payment_attempts, cancelled_at, created_at, updated_at)
     SELECT 'sbs_${p}_' || g, $1, 'pln_${p}_' || (1 + g % 20), 'cst_${p}_' || (g * 2),
       s.state, 'trk-' || g, 'en', $2, 1,
       CASE WHEN s.state = 'active' THEN $2::timestamptz + make_interval(days => g % 30) END, 0,
       CASE WHEN s.state IN ('canceled', 'failed') THEN $2::timestamptz END, $2::timestamptz - make_interval(secs => g), $2
     FROM generate_series(1, 10000) g,
       LATERAL (SELECT (ARRAY['active', 'active', 'active', 'canceled', 'failed'])[1 + g % 5] AS state) s`,
    [shopId, now],
  );
  await db.query(
    `INSERT INTO products (id, shop_id, name, description, currency, amount, quantity, infinite, visible_fields,
       test, immortal, language, transaction_type, additional_data, extra, created_at, updated_at)
     SELECT 'prd_${p}_' || g, $1, 'P' || g, 'd', 'EUR', 100, NULL, true, '[]', true, false, 'en', 'payment', '{}',
       '{}', $2, $2
     FROM generate_series(1, 5000) g`,
    [shopId, now],
  );
  await db.query(
    `INSERT INTO transactions (uid, shop_id, type, status, message, amount, currency, test, tracking_id,
       created_at, updated_at)
     SELECT gen_random_uuid(), $1, CASE WHEN g % 10 = 0 THEN 'refund' ELSE 'payment' END,
       CASE WHEN g % 17 = 0 THEN 'failed' ELSE 'successful' END, 'm', 100 + g % 5000, 'EUR', true, 'trk-' || g,
       $2::timestamptz - make_interval(secs => (10000 - g) * 60), $2
     FROM generate_series(1, 10000) g`,
    [shopId, now],
  );
  await db.query(
    `INSERT INTO emails (id, event_id, shop_id, kind, about, recipient, subject, text, html, language, status, attempts,
       next_attempt_at, created_at)
     SELECT 'eml_${p}_' || g, g, $1, CASE WHEN g % 10 = 0 THEN 'canceled' ELSE 'receipt' END, 'about-' || g,
       CASE WHEN g % 2 = 0 THEN 'jane@example.com' ELSE 'c' || g || '@example.com' END, 's', 't', 'h', 'en',
       CASE WHEN g % 25 = 0 THEN 'failed' ELSE 'sent' END, 1, NULL, $2
     FROM generate_series(1, 5000) g`,
    [shopId, now],
  );
  await db.query(
    `WITH e AS (
       INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, url)
       SELECT $1, 'subscription', 'sbs_${p}_' || g,
         CASE WHEN g % 10 = 0 THEN 'canceled.subscription' ELSE 'renewed.subscription' END, '{}', $2,
         'http://127.0.0.1:9/'
       FROM generate_series(1, 5000) g
       RETURNING id, shop_id, resource_id
     )
     INSERT INTO deliveries (event_id, shop_id, resource_id, status, attempts)
     SELECT id, shop_id, resource_id, CASE WHEN id % 50 = 0 THEN 'failed' ELSE 'delivered' END, 1 FROM e`,
    [shopId, now],
  );
}

let h: Harness;
/**
 * A store of this file's own: no other file's rows or ANALYZE (nor a serving instance's statistics
 * timer) changes the statistics its plans are made with while it measures them.
 */
let db: Db;
let closeStore: () => Promise<void> = async () => {};
let shopId: number;
const now = new Date('2026-03-15T10:00:00Z');
let ctx: ReturnType<typeof shopCtx>;

beforeAll(async () => {
  h = await harness();
  const store = await freshStore();
  db = store.db;
  closeStore = store.close;
  const { shop } = await createShop(
    { db, clock: h.clock, masterKey: h.masterKey },
    { name: 'Filters shop', test: true, signingKeys: shopSigningKeys() },
  );
  shopId = shop.id;
  ctx = { ...shopCtx(h.app.services, shop), db };
  // On PostgreSQL (autovacuum off): statistics of the tables as they were before this shop's rows.
  if (db.kind === 'postgres') for (const table of BIG) await db.query(`ANALYZE ${table}`);
  await seed(db, shopId, now);
}, 120_000);

afterAll(() => closeStore());

/** Runs one list through the measuring store: every statement's rows read, and the rows returned. */
async function measure<T>(run: (db: ListStore) => Promise<T[]>): Promise<{ rows: T[]; plans: Measured[] }> {
  const plans: Measured[] = [];
  const rows = await run(measuring(db, plans));
  return { rows, plans };
}

function expectWithinBudget(what: string, plans: Measured[]): void {
  expect(plans.length, what).toBeGreaterThan(0);
  const read = plans.reduce((sum, p) => sum + p.read, 0);
  const told = `${what}: read ${read} rows\n${plans.map((p) => `${p.sql}\n${p.plan}`).join('\n\n')}`;
  expect(read, told).toBeLessThanOrEqual(BUDGET);
}

describe('the cabinet lists read in proportion to their page, with stale statistics', {
  timeout: 120_000,
}, () => {
  it('subscriptions, by every filter and past a cursor', async () => {
    const filters: Array<[string, SubscriptionListFilter]> = [
      ['none', {}],
      ['state', { state: 'failed' }],
      ['plan title', { plan: 'Gold' }],
      ['plan id', { plan: `pln_f${shopId}_3` }],
      ['common e-mail start', { email: 'jane' }],
      ['whole common address', { email: 'JANE@example.com' }],
      ['rare e-mail start', { email: 'c17' }],
      ['rare address', { email: 'c1000@example.com' }],
      ['unknown address', { email: 'nobody' }],
      ['e-mail and plan', { email: 'jane', plan: 'Gold' }],
      ['e-mail and state', { email: 'jane', state: 'canceled' }],
      ['state and plan', { state: 'active', plan: 'Gold' }],
      ['tracking id', { trackingId: 'trk-500' }],
      ['id', { id: `sbs_f${shopId}_500` }],
    ];
    for (const [name, filter] of filters) {
      for (const after of [undefined, 1_000_000_000]) {
        const { rows, plans } = await measure((db) => subscriptionPage(db, shopId, filter, PAGE, after));
        expectWithinBudget(`subscriptions, ${name}${after ? ', after a cursor' : ''}`, plans);
        if (name === 'common e-mail start' || name === 'plan title') expect(rows).toHaveLength(LIMIT);
      }
    }
    const jane = await subscriptionPage(db, shopId, { email: 'jane', plan: 'Gold' }, PAGE, undefined);
    expect(jane).toHaveLength(LIMIT);
    expect(jane.every((r) => r.email === 'jane@example.com' && r.plan_title === 'Gold')).toBe(true);
    const seqs = jane.map((r) => Number(r.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    const rare = await subscriptionPage(db, shopId, { email: 'c17' }, PAGE, undefined);
    expect(rare.length).toBeGreaterThan(0);
    expect(rare.every((r) => r.email?.startsWith('c17'))).toBe(true);
  });

  it('customers, by e-mail and id', async () => {
    for (const [name, search] of [
      ['none', {}],
      ['common e-mail start', { email: 'jane' }],
      ['whole common address', { email: 'Jane@Example.com' }],
      ['rare e-mail start', { email: 'c17' }],
      ['unknown address', { email: 'nobody' }],
      ['id', { id: `cst_f${shopId}_5` }],
    ] as const) {
      const { plans, rows } = await measure((db) => listCustomerPage(db, shopId, search, undefined, PAGE));
      expectWithinBudget(`customers, ${name}`, plans);
      if (name === 'common e-mail start') expect(rows).toHaveLength(LIMIT);
    }
  });

  it('payments, by every filter', async () => {
    const [one] = await db.query<{ uid: string }>(
      "SELECT uid::text AS uid FROM transactions WHERE shop_id = $1 AND tracking_id = 'trk-77'",
      [shopId],
    );
    for (const [name, f] of [
      ['none', {}],
      ['status', { status: 'failed' }],
      ['type', { type: 'refund' }],
      ['status and type', { status: 'failed', type: 'refund' }],
      ['tracking id', { trackingId: 'trk-77' }],
      ['uid', { uid: one?.uid }],
      ['dates', { from: new Date(now.getTime() - 3 * 86_400_000), to: new Date(now.getTime() - 86_400_000) }],
    ] as const) {
      const { plans } = await measure((db) => listPayments(db, shopId, f, undefined, PAGE));
      expectWithinBudget(`payments, ${name}`, plans);
    }
  });

  it('products', async () => {
    for (const after of [undefined, 1_000_000_000]) {
      const { plans, rows } = await measure((db) => listProductPage(db, shopId, after, PAGE));
      expectWithinBudget('products', plans);
      expect(rows).toHaveLength(LIMIT);
    }
  });

  it('e-mails, by every filter', async () => {
    for (const [name, f] of [
      ['none', {}],
      ['status', { status: 'failed' }],
      ['kind', { kind: 'canceled' }],
      ['recipient', { to: 'Jane@example.com' }],
    ] as const) {
      const { plans } = await measure((db) => listEmailPage(db, shopId, f, PAGE, undefined));
      expectWithinBudget(`e-mails, ${name}`, plans);
    }
  });

  it('notifications, by every filter', async () => {
    for (const [name, f] of [
      ['none', {}],
      ['status', { status: 'failed' }],
      ['event', { event: 'canceled.subscription' }],
      ['resource', { resource_id: `sbs_f${shopId}_40` }],
    ] as const) {
      const plans: Measured[] = [];
      await listNotifications({ ...ctx, db: indexWalking(measuring(db, plans)) as never }, f, {
        limit: PAGE,
        startingAfter: undefined,
      });
      expectWithinBudget(`notifications, ${name}`, plans);
    }
  });
});
