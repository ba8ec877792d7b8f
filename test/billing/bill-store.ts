import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { ManualClock, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { type ShopRow, toShop } from '../../src/shops/repository.js';
import { createShop } from '../../src/shops/service.js';
import { createSubscription } from '../../src/subscriptions/service.js';
import { freePort, KOPEK, type Started, start, waitForBanner } from '../foundation/kopek-process.js';
import { freshPostgres } from '../fresh-store.js';

/**
 * A PostgreSQL database of its own, filled with many due subscriptions, for tests that run real
 * `kopek bill` processes against it and then question the store.
 */

const DAY_MS = 24 * 3600_000;

export interface BillStore {
  db: Db;
  /** DATABASE_URL of the database, for the processes. */
  url: string;
  masterKey: string;
  shopId: number;
  drop(): Promise<void>;
}

export async function openBillStore(): Promise<BillStore> {
  const { db, url, close } = await freshPostgres({}, 4);
  const masterKey = randomBytes(32).toString('hex');
  const { shop } = await createShop(
    { db, clock: systemClock, masterKey: Buffer.from(masterKey, 'hex') },
    { name: 'Billing under load', test: true },
  );
  return {
    db,
    url: url as string,
    masterKey,
    shopId: shop.id,
    drop: close,
  };
}

/**
 * `count` monthly subscriptions whose first period was paid 40 days ago, so the second is due now.
 * One is made by the subscription verb itself (card, plan, customer and first charge as Kopek
 * stores them); the others are copies of its row and of its period-1 charge, made by SQL in one go.
 * The copies share the card token, plan and customer: renewals skip the duplicate check, so a
 * shared card charges like many. Their period-1 charge names no transaction (only the template
 * has one), so checks of the ledger look at periods from 2 on.
 */
export async function seedDueSubscriptions(store: BillStore, count: number): Promise<void> {
  const [shopRow] = await store.db.query<ShopRow>('SELECT * FROM shops WHERE id = $1', [store.shopId]);
  if (!shopRow) throw new Error(`shop ${store.shopId} is missing`);
  const masterKey = Buffer.from(store.masterKey, 'hex');
  const ctx = {
    db: store.db,
    clock: new ManualClock(new Date(systemClock.now().getTime() - 40 * DAY_MS)),
    config: loadConfig({ DATABASE_URL: store.url, KOPEK_MASTER_KEY: store.masterKey, LOG_LEVEL: 'silent' }),
    masterKey,
    log: pino({ level: 'silent' }) as FastifyBaseLogger,
    shop: toShop(shopRow),
  };
  const template = await createSubscription(ctx, {
    plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'month' } },
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    card: {
      number: '4200000000000000',
      verification_value: '123',
      holder: 'JANE DOE',
      exp_month: '12',
      exp_year: '2035',
    },
  });
  if (template.state !== 'active') throw new Error(`the template subscription is ${template.state}`);
  // Every column but the keys, whatever later migrations add.
  const columns = async (table: string, skip: string[]) =>
    (
      await store.db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = $1 AND NOT (column_name = ANY($2::text[]))
         ORDER BY ordinal_position`,
        [table, skip],
      )
    ).map((c) => c.column_name);
  const subCols = (await columns('subscriptions', ['seq', 'id'])).join(', ');
  const charge = await columns('subscription_charges', ['subscription_id', 'transaction_uid']);
  await store.db.tx(async (tx) => {
    // Ids as Kopek makes them: `sbs_` and 24 base62 characters, here a counter.
    await tx.query(
      `INSERT INTO subscriptions (id, ${subCols})
       SELECT 'sbs_Copy' || lpad(g::text, 20, '0'), ${subCols}
       FROM subscriptions, generate_series(1, $2::int) AS g WHERE id = $1`,
      [template.id, count - 1],
    );
    await tx.query(
      `INSERT INTO subscription_charges (subscription_id, ${charge.join(', ')})
       SELECT s.id, ${charge.map((c) => `c.${c}`).join(', ')}
       FROM subscription_charges c JOIN subscriptions s ON s.id LIKE 'sbs\\_Copy%'
       WHERE c.subscription_id = $1 AND c.period = 1`,
      [template.id],
    );
  });
  await store.db.query('ANALYZE subscriptions');
  await store.db.query('ANALYZE subscription_charges');
}

/** The environment of a Kopek process on the store: this test's settings only, whatever the run's. */
export function kopekEnv(store: BillStore, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: store.url,
    KOPEK_MASTER_KEY: store.masterKey,
    LOG_LEVEL: 'warn',
  };
  for (const name of [
    'NODE_OPTIONS',
    'GATEWAY_URL',
    'CHECKOUT_URL',
    'GATEWAY_TOKEN',
    'BILLING',
    'PUBLIC_URL',
  ])
    delete env[name];
  return { ...env, ...extra };
}

/**
 * `kopek serve` on the store, as the gateway of other processes: they charge over HTTP with the
 * credential both sides derive from GATEWAY_TOKEN. Its own billing is off.
 */
export async function startGateway(store: BillStore): Promise<{ run: Started; env: NodeJS.ProcessEnv }> {
  const port = await freePort();
  const token = randomBytes(32).toString('hex');
  const url = `http://127.0.0.1:${port}`;
  const run = start(
    process.execPath,
    [...KOPEK, 'serve'],
    kopekEnv(store, {
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: url,
      GATEWAY_TOKEN: token,
      BILLING: 'off',
    }),
  );
  await waitForBanner(run);
  return { run, env: { GATEWAY_URL: url, GATEWAY_TOKEN: token } };
}

export interface BillRun extends Started {
  summary(): Promise<BillSummaryLine>;
}

export interface BillSummaryLine {
  charged: number;
  successful: number;
  failed: number;
  errors: number;
  unknown: number;
  resolved: number;
  ended: number;
}

const SUMMARY =
  /Billed: (\d+) charge attempts? \((\d+) successful, (\d+) failed, (\d+) error, (\d+) unknown\); (\d+) open attempts? resolved; (\d+) subscriptions? ended/;

/** Starts `kopek bill` on the store, as an operator would (`kopek bill`). */
export function startBill(store: BillStore, extra: NodeJS.ProcessEnv = {}): BillRun {
  const run = start(process.execPath, [...KOPEK, 'bill'], kopekEnv(store, extra));
  return {
    ...run,
    async summary() {
      const { code, signal } = await run.exited;
      const m = SUMMARY.exec(run.output());
      if (code !== 0 || !m) throw new Error(`kopek bill ended (${code ?? signal}):\n${run.output()}`);
      const [charged, successful, failed, errors, unknown, resolved, ended] = m.slice(1).map(Number);
      return { charged, successful, failed, errors, unknown, resolved, ended } as BillSummaryLine;
    },
  };
}

/** Sends SIGKILL to the process (not its group: `kopek bill` starts no children) and waits for its end. */
export async function killNow(run: Started): Promise<void> {
  if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGKILL');
  await run.exited;
}

/** What the store says of the money and the records of the billing run; every list should be empty. */
export interface LedgerReport {
  subscriptions: number;
  /** Successful payments, of periods from 2 on. */
  payments: number;
  /** `sbs_…-period` with more than one successful payment: money taken twice for one period. */
  paidTwice: string[];
  /**
   * Successful payments whose attempt neither records them as successful (by uid) nor still waits
   * for its outcome: money taken and never to be recorded.
   */
  unrecorded: string[];
  /**
   * Successful payments whose attempt still waits for its outcome: the moment between a gateway's
   * answer and its record, which a crash can stretch until a query after the lease resolves it.
   */
  awaitingRecord: number;
  /** Successful charge records without their successful payment (same uid, same tracking id). */
  unpaidRecords: string[];
  /** Abandoned attempts the gateway has a transaction of: they did reach it after all. */
  abandonedCharged: string[];
  /** Attempts still waiting for an outcome. */
  open: number;
  /** Subscriptions due now and not cancelled. */
  due: number;
  /** Subscriptions not active with `period` paid exactly once, by one payment and one record. */
  notRenewed: string[];
}

// A renewal's tracking id: `sbs_…-period` for attempt 1, `sbs_…-period-attempt` after.
const PAYMENTS = `SELECT uid, tracking_id, split_part(tracking_id, '-', 1) AS sub,
    split_part(tracking_id, '-', 2)::int AS period,
    COALESCE(NULLIF(split_part(tracking_id, '-', 3), '')::int, 1) AS attempt
  FROM transactions
  WHERE shop_id = $1 AND type = 'payment' AND status = 'successful'
    AND tracking_id ~ '^sbs_[0-9A-Za-z]+-[0-9]+(-[0-9]+)?$'`;

const OPEN = `'pending', 'unknown', 'incomplete'`;

const TRACKING = `CASE WHEN c.attempt = 1 THEN c.subscription_id || '-' || c.period
  ELSE c.subscription_id || '-' || c.period || '-' || c.attempt END`;

export async function ledgerReport(store: BillStore, period: number): Promise<LedgerReport> {
  const { db, shopId } = store;
  const list = async (sql: string, params: unknown[]) =>
    (await db.query<{ v: string }>(`${sql} LIMIT 20`, params)).map((r) => r.v);
  const count = async (sql: string, params: unknown[] = []) =>
    (await db.query<{ n: number }>(sql, params))[0]?.n ?? 0;
  return {
    subscriptions: await count('SELECT count(*)::int AS n FROM subscriptions'),
    payments: await count(`SELECT count(*)::int AS n FROM (${PAYMENTS}) p WHERE period >= 2`, [shopId]),
    paidTwice: await list(
      `SELECT sub || '-' || period AS v FROM (${PAYMENTS}) p WHERE period >= 2
       GROUP BY sub, period HAVING count(*) > 1`,
      [shopId],
    ),
    unrecorded: await list(
      `SELECT p.tracking_id AS v FROM (${PAYMENTS}) p WHERE p.period >= 2 AND NOT EXISTS (
         SELECT 1 FROM subscription_charges c
         WHERE c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt
           AND (c.status = 'successful' AND c.transaction_uid = p.uid OR c.status IN (${OPEN})))`,
      [shopId],
    ),
    awaitingRecord: await count(
      `SELECT count(*)::int AS n FROM (${PAYMENTS}) p JOIN subscription_charges c
         ON c.subscription_id = p.sub AND c.period = p.period AND c.attempt = p.attempt
       WHERE p.period >= 2 AND c.status IN (${OPEN})`,
      [shopId],
    ),
    unpaidRecords: await list(
      `SELECT ${TRACKING} AS v FROM subscription_charges c
       WHERE c.period >= 2 AND c.status = 'successful' AND NOT EXISTS (
         SELECT 1 FROM transactions t
         WHERE t.uid = c.transaction_uid AND t.shop_id = $1 AND t.type = 'payment'
           AND t.status = 'successful' AND t.tracking_id = ${TRACKING})`,
      [shopId],
    ),
    abandonedCharged: await list(
      `SELECT ${TRACKING} AS v FROM subscription_charges c
       WHERE c.status = 'abandoned' AND EXISTS (
         SELECT 1 FROM transactions t WHERE t.shop_id = $1 AND t.tracking_id = ${TRACKING})`,
      [shopId],
    ),
    open: await count(`SELECT count(*)::int AS n FROM subscription_charges WHERE status IN (${OPEN})`),
    due: await count(
      'SELECT count(*)::int AS n FROM subscriptions WHERE cancelled_at IS NULL AND renew_at <= now()',
    ),
    notRenewed: await list(
      `SELECT s.id AS v FROM subscriptions s
       LEFT JOIN (SELECT sub, count(*) AS n FROM (${PAYMENTS}) p WHERE period = $2 GROUP BY sub) paid
         ON paid.sub = s.id
       LEFT JOIN (SELECT subscription_id, count(*) AS n FROM subscription_charges
                  WHERE period = $2 AND status = 'successful' GROUP BY subscription_id) recorded
         ON recorded.subscription_id = s.id
       WHERE s.state <> 'active' OR s.cancelled_at IS NOT NULL OR s.paid_billing_cycles <> $2
         OR COALESCE(paid.n, 0) <> 1 OR COALESCE(recorded.n, 0) <> 1
       ORDER BY s.id`,
      [shopId, period],
    ),
  };
}

export interface HoldingProxy {
  /** Give this as GATEWAY_URL. */
  url: string;
  /** Resolves when a payment request is being held. */
  holding: Promise<void>;
  /** Sends the held request on, and every later one at once. */
  release(): void;
  close(): Promise<void>;
}

/** Sends a request (its body read already, as `chunks`) on to `target` and its answer back, as a proxy does. */
export async function forward(
  target: string,
  req: IncomingMessage,
  chunks: Buffer[],
  res: ServerResponse,
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
  const method = req.method ?? 'GET';
  const answer = await fetch(`${target}${req.url}`, {
    method,
    headers,
    ...(method === 'GET' ? {} : { body: Buffer.concat(chunks) }),
  });
  res.writeHead(answer.status, {
    'content-type': answer.headers.get('content-type') ?? 'application/json',
  });
  res.end(Buffer.from(await answer.arrayBuffer()));
}

/**
 * A proxy in front of a gateway that passes `pass` payment requests and holds the next one until
 * released: a billing process that is slow in the middle of its batch, on demand.
 */
export async function holdingProxy(target: string, pass: number): Promise<HoldingProxy> {
  let payments = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let held!: () => void;
  const holding = new Promise<void>((r) => {
    held = r;
  });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === 'POST' && req.url?.endsWith('/transactions/payments') && ++payments > pass) {
      held();
      await released;
    }
    await forward(target, req, chunks, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    holding,
    release,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
