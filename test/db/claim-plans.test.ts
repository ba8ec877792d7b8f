import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDue } from '../../src/billing/repository.js';
import { claimExpiredCtps } from '../../src/checkout/api/repository.js';
import type { Statement, Tx } from '../../src/db/db.js';
import { claimDueEmails, lockUnmailedEvents } from '../../src/mail/repository.js';
import { claimExpiredCheckouts } from '../../src/subscriptions/hosted-pages.js';
import { freshPostgresUrl } from '../fresh-store.js';
import { explainAnalyze, type PlanReading } from '../plan-reading.js';

/**
 * The claims of work other than notifications, on queues of 20,000 written in bulk with their
 * statistics never collected: renewals due (`lockDue`), e-mails due and events not yet mailed, and
 * checkout pages expired. EXPLAIN (ANALYZE, BUFFERS) of each claim, run as its caller runs it (with
 * the plan settings it makes for itself), must show it reading rows in proportion to what it takes;
 * and a look that finds nothing due must read next to nothing, however much waits for later.
 *
 * PostgreSQL only: each needs a database of its own with 20,000 rows a queue, written in bulk and
 * never analysed, which the PostgreSQL run makes from its migrated template in a second.
 */

const ROWS = 20_000;
/** Rows a claim may read for each row it takes (and a look that finds nothing, in all). */
const ROWS_PER_CLAIMED = 50;
const now = new Date('2026-11-28T12:00:00Z');
/** Before anything in the queues is due or expired. */
const early = new Date('2026-11-20T12:00:00Z');

async function seed(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ id: number }>(
    `INSERT INTO shops (name, secret_hash, public_key, private_key_enc, created_at, email_notifications)
     VALUES ('Big shop', 'x', 'pk', 'enc', $1, true) RETURNING id`,
    [now],
  );
  const shop = (rows[0] as { id: number }).id;
  await client.query(
    `INSERT INTO plans (id, shop_id, title, currency, amount, "interval", interval_unit, language, infinite,
       number_payment_attempts, test, created_at, updated_at)
     VALUES ('pln_big', $1, 'Gold', 'EUR', 1000, 1, 'month', 'en', true, 3, true, $2, $2)`,
    [shop, now],
  );
  await client.query(
    `INSERT INTO customers (id, shop_id, email, ip, created_at) VALUES ('cst_big', $1, 'c@example.com', '203.0.113.1', $2)`,
    [shop, now],
  );
  // A month's renewals, all due by `now` (after a night without a scheduler), none by `early`.
  await client.query(
    `INSERT INTO subscriptions (id, shop_id, plan_id, customer_id, state, language, billing_anchor, billing_day,
       renew_at, created_at, updated_at)
     SELECT 'sbs_big_' || g, $1, 'pln_big', 'cst_big', 'active', 'en', $2, 1,
       $2::timestamptz + g * interval '1 second', $2, $2
     FROM generate_series(1, $3::int) g ORDER BY g`,
    [shop, '2026-11-27T00:00:00Z', ROWS],
  );
  await client.query(
    `INSERT INTO checkouts (token, shop_id, subscription_id, created_at, expires_at)
     SELECT 'tok_' || g, $1, 'sbs_big_' || g, $2, $2::timestamptz + interval '1 day' + g * interval '1 second'
     FROM generate_series(1, $3::int) g ORDER BY g`,
    [shop, '2026-11-26T00:00:00Z', ROWS],
  );
  await client.query(
    `INSERT INTO events (shop_id, resource_type, resource_id, event, payload, created_at, mail_status)
     SELECT $1, 'subscription', 'sbs_big_' || g, 'renewed.subscription', '{}', $2, 'pending'
     FROM generate_series(1, $3::int) g ORDER BY g`,
    [shop, '2026-11-27T00:00:00Z', ROWS],
  );
  await client.query(
    `INSERT INTO emails (id, shop_id, event_id, kind, about, recipient, subject, text, html, language, status,
       next_attempt_at, created_at)
     SELECT 'eml_' || g, $1, g, 'receipt', 'sbs_big_' || g, 'c@example.com', 'Receipt', 'text', '<p>html</p>', 'en',
       'pending', $2::timestamptz + g * interval '1 second', $2
     FROM generate_series(1, $3::int) g ORDER BY g`,
    [shop, '2026-11-27T00:00:00Z', ROWS],
  );
  return shop;
}

/** A transaction that runs the plan settings, and explains (and runs) the claim itself. */
function explaining(client: pg.Client, readings: PlanReading[]): Tx {
  const query = async <R>(sql: string | Statement, params?: readonly unknown[]): Promise<R[]> => {
    const text = typeof sql === 'string' ? sql : sql.sql;
    const values = (typeof sql === 'string' ? params : sql.params) ?? [];
    if (text.trimStart().startsWith('SELECT set_config'))
      return (await client.query(text, values as unknown[])).rows as R[];
    readings.push(await explainAnalyze(client, text, values));
    return [];
  };
  return {
    inTransaction: true,
    query,
    exec: async () => {
      throw new Error('not a claim');
    },
    batch: async () => {
      throw new Error('not a claim');
    },
  };
}

describe.skipIf(!process.env.DATABASE_URL)(
  'the claims of renewals, e-mails and expired pages on queues never analysed (PostgreSQL only)',
  () => {
    let client: pg.Client;
    let shop: number;
    beforeAll(async () => {
      client = new pg.Client({ connectionString: await freshPostgresUrl() });
      await client.connect();
      shop = await seed(client);
    });
    afterAll(async () => {
      await client.end();
    });

    /** EXPLAIN (ANALYZE) of what `claim` runs, in a transaction rolled back after. */
    const explain = async (claim: (tx: Tx) => Promise<unknown>): Promise<PlanReading> => {
      const readings: PlanReading[] = [];
      await client.query('BEGIN');
      try {
        await claim(explaining(client, readings));
      } finally {
        await client.query('ROLLBACK');
      }
      expect(readings).toHaveLength(1);
      return readings[0] as PlanReading;
    };

    const claims: [string, (tx: Tx, at: Date) => Promise<unknown>, number][] = [
      ['lockDue', (tx, at) => lockDue(tx, at, 50), 50],
      ["lockDue, one shop's", (tx, at) => lockDue(tx, at, 50, shop), 50],
      ['claimDueEmails', (tx, at) => claimDueEmails(tx, at, 10, 300_000), 10],
      ["claimDueEmails, one shop's", (tx, at) => claimDueEmails(tx, at, 10, 300_000, shop), 10],
      ["lockUnmailedEvents, one shop's", (tx) => lockUnmailedEvents(tx, 100, shop), 100],
      ['claimExpiredCheckouts', (tx, at) => claimExpiredCheckouts(tx, at, 100), 100],
    ];

    it('each claims from a queue of 20,000 reading fewer than 50 rows per row it takes', async () => {
      for (const [name, claim, takes] of claims) {
        const plan = await explain((tx) => claim(tx, now));
        expect(plan.claimed, name).toBe(takes);
        expect(plan.rowsRead / plan.claimed, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED);
      }
    });

    it('a look that finds nothing due reads fewer than 50 rows, however much waits for later', async () => {
      // The fan-out's claim has no time to wait for: every unmailed event is due.
      const looks: [string, (tx: Tx, at: Date) => Promise<unknown>][] = [
        ...claims
          .filter(([name]) => !name.startsWith('lockUnmailedEvents'))
          .map(([n, c]): [string, (tx: Tx, at: Date) => Promise<unknown>] => [n, c]),
        ['claimExpiredCtps', (tx, at) => claimExpiredCtps(tx, at, 100)],
      ];
      for (const [name, look] of looks) {
        const plan = await explain((tx) => look(tx, early));
        expect(plan.claimed, name).toBe(0);
        expect(plan.rowsRead, `${name}: ${plan.describe()}`).toBeLessThan(ROWS_PER_CLAIMED);
      }
    });
  },
);
