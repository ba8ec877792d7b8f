import { type Queryable, type Statement, sqlText } from '../db/db.js';
import { shaped, stampedShape } from '../db/rows.js';

export interface CardRow {
  token: string;
  shop_id: number;
  number_enc: string;
  stamp: string;
  brand: string;
  first_1: string;
  last_4: string;
  bin: string;
  holder: string;
  exp_month: number;
  exp_year: number;
  created_at: Date;
  updated_at: Date;
}

export type NewCardRow = Omit<CardRow, 'created_at' | 'updated_at'>;

const CARD_COLUMNS = [
  'token',
  'shop_id',
  'number_enc',
  'stamp',
  'brand',
  'first_1',
  'last_4',
  'bin',
  'holder',
  'exp_month',
  'exp_year',
] as const;

/** A new card's row: its columns, then the instant (created_at and updated_at). */
const CARD_ROWS = stampedShape('cards', 'cards', CARD_COLUMNS);

/** In CARD_COLUMNS order, then the instant. */
function cardValues(c: NewCardRow, now: Date): unknown[] {
  return [
    c.token,
    c.shop_id,
    c.number_enc,
    c.stamp,
    c.brand,
    c.first_1,
    c.last_4,
    c.bin,
    c.holder,
    c.exp_month,
    c.exp_year,
    now,
  ];
}

/** The INSERT of a new card, as rows that a group of writes may share (db/rows.ts). */
export function cardInsert(c: NewCardRow, now: Date): Statement {
  return shaped(CARD_ROWS, cardValues(c, now));
}

/**
 * The INSERT of a card as the CTE `stored_card` of a larger statement, parameters numbered from
 * `$first`: a charge with a new card stores it in the same statement that records the charge.
 */
export function cardInsertCte(c: NewCardRow, now: Date, first: number): { sql: string; values: unknown[] } {
  const sql = sqlText(
    `card-cte ${first}`,
    () => `stored_card AS (${CARD_ROWS.around(CARD_ROWS.tuple(first, 0))})`,
  );
  return { sql, values: cardValues(c, now) };
}

/** The row as the store keeps it once inserted. */
export function storedCardRow(c: NewCardRow, now: Date): CardRow {
  return {
    token: c.token,
    shop_id: c.shop_id,
    number_enc: c.number_enc,
    stamp: c.stamp,
    brand: c.brand,
    first_1: c.first_1,
    last_4: c.last_4,
    bin: c.bin,
    holder: c.holder,
    exp_month: c.exp_month,
    exp_year: c.exp_year,
    created_at: now,
    updated_at: now,
  };
}

export async function insertCard(db: Queryable, c: NewCardRow, now: Date): Promise<CardRow> {
  const insert = cardInsertCte(c, now, 1);
  await db.query(
    sqlText('card-insert', () => `WITH ${insert.sql} SELECT 1`),
    insert.values,
  );
  return storedCardRow(c, now);
}

/** A shop's card by token; another shop's token is simply not found. */
export async function findCardRow(
  db: Queryable,
  shopId: number,
  token: string,
): Promise<CardRow | undefined> {
  const [row] = await db.query<CardRow>('SELECT * FROM cards WHERE shop_id = $1 AND token = $2', [
    shopId,
    token,
  ]);
  return row;
}

export interface CardDetailsChange {
  holder?: string | undefined;
  expMonth?: number | undefined;
  expYear?: number | undefined;
}

export async function updateCardDetails(
  db: Queryable,
  shopId: number,
  token: string,
  change: CardDetailsChange,
  now: Date,
): Promise<CardRow | undefined> {
  const [row] = await db.query<CardRow>(
    `UPDATE cards SET holder = COALESCE($3, holder), exp_month = COALESCE($4, exp_month),
       exp_year = COALESCE($5, exp_year), updated_at = $6
     WHERE shop_id = $1 AND token = $2 RETURNING *`,
    [shopId, token, change.holder ?? null, change.expMonth ?? null, change.expYear ?? null, now],
  );
  return row;
}

/** Cards by token, whatever their shop: for a caller that checks the shop itself (a batch of charges). */
export function findCardRowsByTokens(db: Queryable, tokens: readonly string[]): Promise<CardRow[]> {
  return db.query<CardRow>('SELECT * FROM cards WHERE token = ANY($1::text[])', [tokens]);
}
