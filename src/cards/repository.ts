import type { Queryable } from '../db/db.js';

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

export async function insertCard(db: Queryable, c: NewCardRow, now: Date): Promise<CardRow> {
  const [row] = await db.query<CardRow>(
    `INSERT INTO cards (token, shop_id, number_enc, stamp, brand, first_1, last_4, bin, holder, exp_month, exp_year, created_at, updated_at)
     VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$12) RETURNING *`,
    [
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
    ],
  );
  return row as CardRow;
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
