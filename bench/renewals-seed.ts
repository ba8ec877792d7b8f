/**
 * The renewal benchmark's store: a fresh schema holding `count` subscriptions due now. One of them is
 * made through Kopek's own verbs (a test shop, then POST /subscriptions' verb with a card, a new plan
 * and a new customer, its first period charged and recorded); the others are SQL copies of it, made
 * by INSERT … SELECT over generate_series, each under ids of its own: the subscription, its customer,
 * its period-1 payment in the ledger (with its status history), its period-1 charge record and its
 * events. Every copy shares the original's plan and card token (the vault seals a card number to its
 * token, so a copied card row could not be opened under another token).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { Clock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import type { Services } from '../src/context.js';
import type { Db } from '../src/db/db.js';
import { migrate } from '../src/db/migrate.js';
import { createPostgresDb } from '../src/db/postgres.js';
import { createShop } from '../src/shops/service.js';
import { createSubscription } from '../src/subscriptions/service.js';

export interface SeededStore {
  shopId: number;
  planId: string;
  /** The subscription made through the verbs (the copies are of it). */
  originalId: string;
  /** Subscriptions due, the original included. */
  count: number;
  /** When the subscriptions fell due (the latest of them). */
  dueAt: Date;
  masterKeyHex: string;
}

const DAY = 24 * 3600_000;

/** The tables seeding writes (the schema's own, through its search_path). */
const SEEDED_TABLES = [
  'shops',
  'plans',
  'cards',
  'customers',
  'subscriptions',
  'transactions',
  'transaction_history',
  'subscription_charges',
  'events',
];

interface Column {
  name: string;
  type: string;
}

async function columnsOf(db: Db, table: string): Promise<Column[]> {
  // Identity columns are left to their sequence, so rows the engine adds later do not collide.
  return db.query<Column>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'NO'
     ORDER BY ordinal_position`,
    [table],
  );
}

const quoteLiteral = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * The copy number `i` (a SQL expression) of an id: same prefix, same length, same alphabet (hex is
 * within base62), derived from the original and `i`, so every table names the same copy alike. A
 * uuid stays a uuid.
 */
function copyOf(id: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    return `md5(${quoteLiteral(id)} || i)::uuid::text`;
  }
  const cut = id.indexOf('_') + 1;
  const rest = id.length - cut;
  if (rest > 32) throw new Error(`cannot copy the id ${id}: longer than an md5`);
  return `${quoteLiteral(id.slice(0, cut))} || left(md5(${quoteLiteral(id)} || i), ${rest})`;
}

/**
 * INSERT … SELECT of copies 2..count of the rows `where` selects in `table`: every id of `ids` is
 * replaced in text and JSON columns by its copy, and every instant moves `i` milliseconds earlier,
 * so copies fall due one after the other, in order, and each row stays consistent in itself.
 */
async function copyRows(db: Db, table: string, where: string, ids: string[], count: number): Promise<number> {
  const columns = await columnsOf(db, table);
  const expr = (c: Column) => {
    const col = `o.${c.name}`;
    if (c.type === 'timestamp with time zone') return `${col} - i * interval '1 millisecond'`;
    if (c.type === 'text' || c.type === 'jsonb' || c.type === 'uuid') {
      let text = `${col}::text`;
      for (const id of ids) text = `replace(${text}, ${quoteLiteral(id)}, ${copyOf(id)})`;
      return c.type === 'text' ? text : `(${text})::${c.type}`;
    }
    return col;
  };
  const names = columns.map((c) => c.name).join(', ');
  const [row] = await db.query<{ n: number }>(
    // The originals are read once, first: scanned per copy, the table would grow under the scan.
    `WITH original AS MATERIALIZED (SELECT * FROM ${table} o WHERE ${where}),
     copied AS (
       INSERT INTO ${table} (${names})
       SELECT ${columns.map(expr).join(', ')} FROM original o, generate_series(2, $1::int) AS i
       RETURNING 1
     ) SELECT count(*)::int AS n FROM copied`,
    [count],
  );
  return row?.n ?? 0;
}

const silentLog = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

/** Kopek's services for the seeding verbs, on a clock fixed at `at`. */
function servicesAt(db: Db, masterKeyHex: string, dbUrl: string, at: Date): Services {
  const config = loadConfig({
    DATABASE_URL: dbUrl,
    KOPEK_MASTER_KEY: masterKeyHex,
    LOG_LEVEL: 'silent',
    PUBLIC_URL: 'http://127.0.0.1:1',
  });
  const clock: Clock = { now: () => new Date(at) };
  return { db, clock, config, masterKey: Buffer.from(masterKeyHex, 'hex'), log: silentLog };
}

/**
 * Migrates the schema `dbUrl` points at and fills it with `count` due subscriptions. The original is
 * created 40 days ago at noon UTC (so that the copies, up to `count` ms earlier, keep its billing
 * day); its monthly period 1 is paid and period 2 fell due about ten days ago.
 */
export async function seedRenewals(dbUrl: string, count: number): Promise<SeededStore> {
  const db = createPostgresDb(dbUrl, 2);
  try {
    await migrate(db);
    const masterKeyHex = randomBytes(32).toString('hex');
    const created = new Date(Math.floor((Date.now() - 40 * DAY) / DAY) * DAY + DAY / 2);
    const services = servicesAt(db, masterKeyHex, dbUrl, created);
    const { shop } = await createShop(services, { name: 'Renewals bench', test: true });
    const sub = await createSubscription(
      { ...services, shop },
      {
        plan: {
          title: 'Benchmark plan',
          currency: 'USD',
          plan: { amount: 999, interval: 1, interval_unit: 'month' },
        },
        customer: { email: 'renewals@example.com', ip: '203.0.113.7', first_name: 'Bench' },
        tracking_id: 'bench-renewal',
        card: {
          number: '4200000000000000',
          verification_value: '123',
          holder: 'Bench Runner',
          exp_month: '12',
          exp_year: String(new Date().getUTCFullYear() + 3),
        },
      },
    );
    const [original] = await db.query<{
      id: string;
      plan_id: string;
      customer_id: string;
      renew_at: Date | null;
      state: string;
    }>('SELECT id, plan_id, customer_id, renew_at, state FROM subscriptions WHERE id = $1', [sub.id]);
    const charges = await db.query<{ period: number; status: string; transaction_uid: string }>(
      'SELECT period, status, transaction_uid FROM subscription_charges WHERE subscription_id = $1',
      [sub.id],
    );
    const [charge] = charges;
    if (
      !original?.renew_at ||
      original.state !== 'active' ||
      charges.length !== 1 ||
      charge?.period !== 1 ||
      charge.status !== 'successful'
    ) {
      throw new Error(
        `the original subscription is not active with one successful period-1 charge: ${JSON.stringify({ original, charges })}`,
      );
    }
    if (original.renew_at.getTime() >= Date.now()) throw new Error('the original subscription is not due');
    const ids = [original.id, original.customer_id, charge.transaction_uid];
    const uid = quoteLiteral(charge.transaction_uid);
    await copyRows(db, 'customers', `o.id = ${quoteLiteral(original.customer_id)}`, ids, count);
    const copied = await copyRows(db, 'subscriptions', `o.id = ${quoteLiteral(original.id)}`, ids, count);
    await copyRows(db, 'transactions', `o.uid = ${uid}`, ids, count);
    await copyRows(db, 'transaction_history', `o.uid = ${uid}`, ids, count);
    await copyRows(
      db,
      'subscription_charges',
      `o.subscription_id = ${quoteLiteral(original.id)}`,
      ids,
      count,
    );
    await copyRows(db, 'events', `o.resource_id IN (${quoteLiteral(original.id)}, ${uid})`, ids, count);
    if (copied !== count - 1) throw new Error(`copied ${copied} subscriptions, wanted ${count - 1}`);
    // Fresh statistics and visibility maps, as a store that has been running a while has.
    await db.query(`VACUUM ANALYZE ${SEEDED_TABLES.join(', ')}`);
    return {
      shopId: shop.id,
      planId: original.plan_id,
      originalId: original.id,
      count,
      dueAt: original.renew_at,
      masterKeyHex,
    };
  } finally {
    await db.close();
  }
}
