import type { IntervalUnit } from '../calendar/interval.js';
import type { ListParams } from '../core/paging.js';
import type { Queryable, Statement } from '../db/db.js';
import { listPage } from '../db/list.js';
import { shaped, valuesShape } from '../db/rows.js';

export interface PlanRow {
  id: string;
  shop_id: number;
  title: string;
  currency: string;
  amount: number;
  interval: number;
  interval_unit: IntervalUnit;
  trial_amount: number | null;
  trial_interval: number | null;
  trial_interval_unit: IntervalUnit | null;
  trial_as_first_payment: boolean | null;
  language: string;
  infinite: boolean;
  billing_cycles: number | null;
  number_payment_attempts: number;
  test: boolean;
  created_at: Date;
  updated_at: Date;
}

/** What the table stores besides id, shop and timestamps. */
export type PlanData = Omit<PlanRow, 'id' | 'shop_id' | 'created_at' | 'updated_at'>;

const COLUMNS = [
  'title',
  'currency',
  'amount',
  '"interval"',
  'interval_unit',
  'trial_amount',
  'trial_interval',
  'trial_interval_unit',
  'trial_as_first_payment',
  'language',
  'infinite',
  'billing_cycles',
  'number_payment_attempts',
  'test',
] as const;

/** A new plan's row: id, shop_id, COLUMNS, created_at, updated_at. */
const PLAN_ROWS = valuesShape(
  'plans',
  `INSERT INTO plans (id, shop_id, ${COLUMNS.join(', ')}, created_at, updated_at)`,
  COLUMNS.length + 4,
);
const INSERT_RETURNING_SQL = `${PLAN_ROWS.around(PLAN_ROWS.tuple(1, 0))} RETURNING *`;

/**
 * The INSERT of a new plan, to run alone or in a batch; RETURNING the stored row unless told not to,
 * and then as rows that a group of writes may share (db/rows.ts).
 */
export function planInsert(shopId: number, id: string, p: PlanData, now: Date, returning = true): Statement {
  const params = [
    id,
    shopId,
    p.title,
    p.currency,
    p.amount,
    p.interval,
    p.interval_unit,
    p.trial_amount,
    p.trial_interval,
    p.trial_interval_unit,
    p.trial_as_first_payment,
    p.language,
    p.infinite,
    p.billing_cycles,
    p.number_payment_attempts,
    p.test,
    now,
    now,
  ];
  return returning ? { sql: INSERT_RETURNING_SQL, params } : shaped(PLAN_ROWS, params);
}

/** The row planInsert stores. */
export function newPlanRow(shopId: number, id: string, p: PlanData, now: Date): PlanRow {
  return {
    id,
    shop_id: shopId,
    title: p.title,
    currency: p.currency,
    amount: p.amount,
    interval: p.interval,
    interval_unit: p.interval_unit,
    trial_amount: p.trial_amount,
    trial_interval: p.trial_interval,
    trial_interval_unit: p.trial_interval_unit,
    trial_as_first_payment: p.trial_as_first_payment,
    language: p.language,
    infinite: p.infinite,
    billing_cycles: p.billing_cycles,
    number_payment_attempts: p.number_payment_attempts,
    test: p.test,
    created_at: now,
    updated_at: now,
  };
}

export async function insertPlan(
  db: Queryable,
  shopId: number,
  id: string,
  p: PlanData,
  now: Date,
): Promise<PlanRow> {
  const insert = planInsert(shopId, id, p, now);
  const [row] = await db.query<PlanRow>(insert.sql, insert.params);
  return row as PlanRow;
}

export async function findPlan(db: Queryable, shopId: number, id: string): Promise<PlanRow | undefined> {
  const [row] = await db.query<PlanRow>('SELECT * FROM plans WHERE shop_id = $1 AND id = $2', [shopId, id]);
  return row;
}

/** Several of a shop's plans at once (a page of subscriptions names them). */
export function findPlans(db: Queryable, shopId: number, ids: string[]): Promise<PlanRow[]> {
  return db.query<PlanRow>('SELECT * FROM plans WHERE shop_id = $1 AND id = ANY($2::text[])', [shopId, ids]);
}

export function listPlanRows(db: Queryable, shopId: number, params: ListParams): Promise<PlanRow[]> {
  return listPage<PlanRow>(db, 'plans', shopId, params);
}
