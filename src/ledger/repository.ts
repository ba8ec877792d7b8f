import { type Queryable, type Statement, sqlText, type Tx } from '../db/db.js';
import { shaped, stampedShape } from '../db/rows.js';
import {
  type Announcement,
  delivered,
  deliveriesOf,
  EVENT_COLUMNS,
  EVENT_INSERT_COLUMNS,
  eventInsert,
  mailStatusOf,
} from '../notifications/index.js';

export const TRANSACTION_TYPES = [
  'payment',
  'authorization',
  'capture',
  'void',
  'refund',
  'credit',
  'tokenization',
  'proof',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];
export type TransactionStatus = 'successful' | 'failed' | 'incomplete' | 'error' | 'pending';

export interface TransactionRow {
  uid: string;
  shop_id: number;
  type: TransactionType;
  status: TransactionStatus;
  message: string | null;
  amount: number;
  currency: string;
  description: string | null;
  tracking_id: string | null;
  parent_uid: string | null;
  test: boolean;
  language: string | null;
  card_token: string | null;
  card: Record<string, unknown> | null;
  billing_address: Record<string, unknown> | null;
  customer: Record<string, unknown> | null;
  three_d_secure: Record<string, unknown> | null;
  avs_cvc: Record<string, unknown> | null;
  return_url: string | null;
  notification_url: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  paid_at: Date | null;
}

export type NewTransaction = Pick<
  TransactionRow,
  'uid' | 'shop_id' | 'type' | 'status' | 'amount' | 'currency' | 'test'
> &
  Partial<
    Omit<
      TransactionRow,
      'uid' | 'shop_id' | 'type' | 'status' | 'amount' | 'currency' | 'test' | 'created_at' | 'updated_at'
    >
  >;

const COLUMNS = [
  'uid',
  'shop_id',
  'type',
  'status',
  'message',
  'amount',
  'currency',
  'description',
  'tracking_id',
  'parent_uid',
  'test',
  'language',
  'card_token',
  'card',
  'billing_address',
  'customer',
  'three_d_secure',
  'avs_cvc',
  'return_url',
  'notification_url',
  'details',
  'paid_at',
] as const;

const jsonOrNull = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));

/** The parameters of a new transaction, in COLUMNS order; absent members are NULL (details `{}`). */
function values(t: NewTransaction): unknown[] {
  return [
    t.uid,
    t.shop_id,
    t.type,
    t.status,
    t.message ?? null,
    t.amount,
    t.currency,
    t.description ?? null,
    t.tracking_id ?? null,
    t.parent_uid ?? null,
    t.test,
    t.language ?? null,
    t.card_token ?? null,
    jsonOrNull(t.card),
    jsonOrNull(t.billing_address),
    jsonOrNull(t.customer),
    jsonOrNull(t.three_d_secure),
    jsonOrNull(t.avs_cvc),
    t.return_url ?? null,
    t.notification_url ?? null,
    t.details === undefined ? '{}' : JSON.stringify(t.details),
    t.paid_at ?? null,
  ];
}

/**
 * The INSERT of a transaction as the CTE `created` of a larger statement, with parameters numbered
 * from `$first`. With `gate`, the name of an earlier CTE of the statement, the row is written only
 * when that CTE yields a row: how a charge is recorded only when its duplicate check lets it through,
 * in the same statement. With `event`, the statement also writes that event to the outbox, from the
 * row `created` yields: the transaction and its announcement commit together, or neither is written
 * (a held fingerprint writes neither), without another statement. Its history starts when its status
 * first changes (changeStatus).
 */
export function transactionInsertCtes(
  t: NewTransaction,
  now: Date,
  first: number,
  gate?: string,
  event?: Announcement,
): { sql: string; values: unknown[] } {
  const params = values(t);
  params.push(now);
  if (event) {
    const announced = eventInsert(event).params ?? [];
    if (announced.length !== EVENT_COLUMNS.length)
      throw new Error('the outbox row changed shape: EVENT_COLUMNS must follow eventInsert');
    params.push(...announced);
  }
  const sql = sqlText(`transaction-cte ${first} ${gate ?? ''} ${event ? 'announced' : ''}`, () => {
    const at = `$${first + COLUMNS.length}`;
    const selected = COLUMNS.map((_, i) => `$${first + i}`).join(', ');
    const created = `created AS (
       INSERT INTO transactions (${COLUMNS.join(', ')}, created_at, updated_at)
       SELECT ${selected}, ${at}, ${at}${gate ? ` FROM ${gate}` : ''} RETURNING *
     )`;
    if (!event) return created;
    const from = first + COLUMNS.length + 1;
    const announced = EVENT_COLUMNS.map((_, i) => `$${from + i}`).join(', ');
    return `${created}, announced AS (
       INSERT INTO events (${EVENT_INSERT_COLUMNS}) SELECT ${announced}, ${mailStatusOf(`$${from}`)} FROM created
       RETURNING id, shop_id, resource_id, url, created_at
     ), queued AS (
       ${deliveriesOf('announced')}
     )`;
  });
  return { sql, values: params };
}

/** A new transaction's row: its columns, then the instant (created_at and updated_at). */
const TRANSACTION_ROWS = stampedShape('transactions', 'transactions', COLUMNS);

/**
 * The INSERT of a new transaction, as rows that a group of writes may share (db/rows.ts); its event,
 * if it has one, is the caller's to write beside it (notifications' eventsInsert), in the same batch.
 */
export function transactionInsert(t: NewTransaction, now: Date): Statement {
  return shaped(TRANSACTION_ROWS, [...values(t), now]);
}

/** The row a new transaction becomes once inserted, for answering before reading it back. */
export function storedTransactionRow(t: NewTransaction, now: Date): TransactionRow {
  return {
    uid: t.uid,
    shop_id: t.shop_id,
    type: t.type,
    status: t.status,
    message: t.message ?? null,
    amount: t.amount,
    currency: t.currency,
    description: t.description ?? null,
    tracking_id: t.tracking_id ?? null,
    parent_uid: t.parent_uid ?? null,
    test: t.test,
    language: t.language ?? null,
    card_token: t.card_token ?? null,
    card: t.card ?? null,
    billing_address: t.billing_address ?? null,
    customer: t.customer ?? null,
    three_d_secure: t.three_d_secure ?? null,
    avs_cvc: t.avs_cvc ?? null,
    return_url: t.return_url ?? null,
    notification_url: t.notification_url ?? null,
    details: t.details ?? {},
    created_at: now,
    updated_at: now,
    paid_at: t.paid_at ?? null,
  };
}

/** Records a new transaction, and with `event` its announcement, in one statement. */
export async function insertTransaction(
  db: Queryable,
  t: NewTransaction,
  now: Date,
  event?: Announcement,
): Promise<TransactionRow> {
  const insert = transactionInsertCtes(t, now, 1, undefined, event);
  const sql = sqlText(
    `transaction-insert ${event ? 'announced' : ''}`,
    () => `WITH ${insert.sql} SELECT * FROM created`,
  );
  const wakes = event !== undefined && delivered(event);
  const [row] = await db.query<TransactionRow>({ sql, params: insert.values, wakes });
  return row as TransactionRow;
}

export interface StatusChange {
  status: TransactionStatus;
  message: string | null;
  paidAt?: Date | null;
  threeDSecure?: Record<string, unknown> | null;
  details?: Record<string, unknown>;
}

/**
 * Moves a transaction to a new status; the change is appended to its history. The history of a
 * transaction is written from its first change on: that change records the status it had until then
 * (at its creation) and the new one, so a transaction without history rows never changed status.
 * Call with the transaction locked (lockTransaction), as the verbs that change one do.
 */
export async function changeStatus(
  db: Tx,
  uid: string,
  change: StatusChange,
  now: Date,
): Promise<TransactionRow> {
  await db.query(
    `INSERT INTO transaction_history (uid, status, message, at, shop_id)
     SELECT uid, status, message, created_at, shop_id FROM transactions t
     WHERE uid = $1 AND NOT EXISTS (SELECT 1 FROM transaction_history h WHERE h.uid = t.uid)`,
    [uid],
  );
  const [row] = await db.query<TransactionRow>(
    `UPDATE transactions SET status = $2, message = $3, updated_at = $4,
       paid_at = COALESCE($5, paid_at),
       three_d_secure = COALESCE($6::jsonb, three_d_secure),
       details = details || COALESCE($7::jsonb, '{}'::jsonb)
     WHERE uid = $1 RETURNING *`,
    [
      uid,
      change.status,
      change.message,
      now,
      change.paidAt ?? null,
      change.threeDSecure ? JSON.stringify(change.threeDSecure) : null,
      change.details ? JSON.stringify(change.details) : null,
    ],
  );
  if (!row) throw new Error(`transaction ${uid} vanished during a status change`);
  await db.query(
    'INSERT INTO transaction_history (uid, status, message, at, shop_id) VALUES ($1, $2, $3, $4, $5)',
    [uid, change.status, change.message, now, row.shop_id],
  );
  return row;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A shop's transaction by uid; another shop's or a malformed uid is simply not found. */
export async function findTransaction(
  db: Queryable,
  shopId: number,
  uid: string,
): Promise<TransactionRow | undefined> {
  if (!UUID.test(uid)) return undefined;
  const [row] = await db.query<TransactionRow>('SELECT * FROM transactions WHERE shop_id = $1 AND uid = $2', [
    shopId,
    uid,
  ]);
  return row;
}

/** The same, locked until the transaction ends: for verbs that check and then change a parent. */
export async function lockTransaction(
  db: Tx,
  shopId: number,
  uid: string,
): Promise<TransactionRow | undefined> {
  if (!UUID.test(uid)) return undefined;
  const [row] = await db.query<TransactionRow>(
    'SELECT * FROM transactions WHERE shop_id = $1 AND uid = $2 FOR UPDATE',
    [shopId, uid],
  );
  return row;
}

/**
 * The newest `limit` transactions of a shop with this tracking_id and one of `types`, newest first:
 * the platform answers a query by tracking_id with its latest matches.
 */
export function findByTrackingId(
  db: Queryable,
  shopId: number,
  trackingId: string,
  types: readonly string[],
  limit: number,
): Promise<TransactionRow[]> {
  return db.query<TransactionRow>(
    `SELECT * FROM transactions WHERE shop_id = $1 AND tracking_id = $2 AND type = ANY($3::text[])
      ORDER BY seq DESC LIMIT $4`,
    [shopId, trackingId, [...types], limit],
  );
}

export function childrenOf(db: Queryable, parentUid: string): Promise<TransactionRow[]> {
  return db.query<TransactionRow>('SELECT * FROM transactions WHERE parent_uid = $1 ORDER BY seq', [
    parentUid,
  ]);
}

export interface HistoryEntry {
  status: string;
  message: string | null;
  at: Date;
}

/** Every status a transaction has had, oldest first: its history, or its only status if it never changed. */
export async function historyOf(db: Queryable, uid: string): Promise<HistoryEntry[]> {
  const rows = await db.query<HistoryEntry>(
    'SELECT status, message, at FROM transaction_history WHERE uid = $1 ORDER BY seq',
    [uid],
  );
  if (rows.length > 0) return rows;
  return db.query<HistoryEntry>('SELECT status, message, created_at AS at FROM transactions WHERE uid = $1', [
    uid,
  ]);
}

/**
 * A transaction by uid whatever its shop, locked: for steps that arrive without a shop's credentials,
 * such as the cardholder's 3-D Secure step at /process/{uid}, where the uid itself is the reference.
 */
export async function lockTransactionByUid(db: Tx, uid: string): Promise<TransactionRow | undefined> {
  if (!UUID.test(uid)) return undefined;
  const [row] = await db.query<TransactionRow>('SELECT * FROM transactions WHERE uid = $1 FOR UPDATE', [uid]);
  return row;
}

/** The same without a lock, for reading (the 3-D Secure page before the cardholder acts). */
export async function findTransactionByUid(db: Queryable, uid: string): Promise<TransactionRow | undefined> {
  if (!UUID.test(uid)) return undefined;
  const [row] = await db.query<TransactionRow>('SELECT * FROM transactions WHERE uid = $1', [uid]);
  return row;
}
