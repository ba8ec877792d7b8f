import type { NotificationAuth, QuietHoursSetting, RetryScheduleSetting, Shop } from '../context.js';
import type { Queryable, Tx } from '../db/db.js';

/** shops.id is a PostgreSQL integer: a larger number can name no shop, and overflows a lookup. */
export const MAX_SHOP_ID = 2_147_483_647;

export {
  NOTIFICATION_AUTHS,
  type NotificationAuth,
  type QuietHoursSetting,
  type RetryScheduleSetting,
  type Shop,
} from '../context.js';

export interface ShopRow {
  id: number;
  name: string;
  secret_hash: string;
  test: boolean;
  three_ds: boolean;
  email_notifications: boolean;
  notification_email: string | null;
  return_url: string | null;
  public_key: string;
  private_key_enc: string;
  /** The secret key sealed for HTTP Basic on notifications; null for shops created before it was kept. */
  secret_enc: string | null;
  /** How notifications authenticate: HTTP Basic (https only) or no credentials. */
  notification_auth: NotificationAuth;
  /** The sealed webhook signing secret (Kopek-Signature); null until first used by an older shop. */
  webhook_secret_enc: string | null;
  /** The secret it replaced, still signing until webhook_secret_prev_until (the shop's clock). */
  webhook_secret_prev_enc: string | null;
  webhook_secret_prev_until: Date | null;
  /** A new key pair shown to the shop, signing only once confirmed. */
  pending_public_key: string | null;
  pending_private_key_enc: string | null;
  time_zone: string;
  retry_schedule: RetryScheduleSetting | null;
  quiet_hours: QuietHoursSetting | null;
  clock_offset_ms: number;
  /** Origins that may frame the shop's checkout pages; null: any site. */
  frame_origins: string[] | null;
  created_at: Date;
}

export function toShop(r: ShopRow): Shop {
  return {
    id: r.id,
    name: r.name,
    test: r.test,
    threeDs: r.three_ds,
    emailNotifications: r.email_notifications,
    notificationEmail: r.notification_email,
    returnUrl: r.return_url,
    publicKey: r.public_key,
    timeZone: r.time_zone ?? 'UTC',
    retrySchedule: r.retry_schedule ?? null,
    quietHours: r.quiet_hours ?? null,
    clockOffsetMs: r.clock_offset_ms ?? 0,
    frameOrigins: r.frame_origins ?? null,
    createdAt: r.created_at,
  };
}

export interface NewShopRow {
  id: number | undefined;
  name: string;
  secretHash: string;
  test: boolean;
  threeDs: boolean;
  publicKey: string;
  privateKeyEnc: string;
  secretEnc: string;
  webhookSecretEnc: string;
  createdAt: Date;
}

export async function insertShop(db: Tx, s: NewShopRow): Promise<ShopRow> {
  const cols =
    'name, secret_hash, test, three_ds, public_key, private_key_enc, created_at, secret_enc, webhook_secret_enc';
  const values = [
    s.name,
    s.secretHash,
    s.test,
    s.threeDs,
    s.publicKey,
    s.privateKeyEnc,
    s.createdAt,
    s.secretEnc,
    s.webhookSecretEnc,
  ];
  if (s.id === undefined) {
    const [row] = await db.query<ShopRow>(
      `INSERT INTO shops (${cols}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) RETURNING *`,
      values,
    );
    return row as ShopRow;
  }
  // An explicit id must not collide with ids the identity sequence hands out later. The lock waits
  // for inserts that already drew a value from the sequence, and the sequence only ever moves
  // forward: setting it to max(id) could move it behind a value drawn but not yet committed.
  await db.query('LOCK TABLE shops IN SHARE ROW EXCLUSIVE MODE');
  const [row] = await db.query<ShopRow>(
    `INSERT INTO shops (id, ${cols}) VALUES ($10,$1,$2,$3,$4,$5,$6,$7,$8,$9) RETURNING *`,
    [...values, s.id],
  );
  await db.query(
    `SELECT setval(pg_get_serial_sequence('shops', 'id'), $1::bigint)
     WHERE $1::bigint > COALESCE(pg_sequence_last_value(pg_get_serial_sequence('shops', 'id')::regclass), 0)`,
    [s.id],
  );
  return row as ShopRow;
}

export async function findShopRow(db: Queryable, id: number): Promise<ShopRow | undefined> {
  const [row] = await db.query<ShopRow>('SELECT * FROM shops WHERE id = $1', [id]);
  return row;
}

/** The rows of the shops of `ids` (those that exist, in no particular order). */
export function findShopRows(db: Queryable, ids: number[]): Promise<ShopRow[]> {
  return db.query<ShopRow>('SELECT * FROM shops WHERE id = ANY($1::int[])', [ids]);
}

/** A test shop's clock offset as it is now (another instance may have moved it a moment ago). */
export async function shopClockOffset(db: Queryable, id: number): Promise<number | undefined> {
  const [row] = await db.query<{ clock_offset_ms: string | number }>(
    'SELECT clock_offset_ms FROM shops WHERE id = $1',
    [id],
  );
  return row === undefined ? undefined : Number(row.clock_offset_ms);
}

/** Gives the shop a new secret key: its hash for authentication and its sealed copy for notifications. */
export async function replaceShopSecret(
  db: Queryable,
  id: number,
  secretHash: string,
  secretEnc: string,
): Promise<boolean> {
  const rows = await db.query(
    'UPDATE shops SET secret_hash = $2, secret_enc = $3 WHERE id = $1 RETURNING id',
    [id, secretHash, secretEnc],
  );
  return rows.length > 0;
}

export async function listShopRows(db: Queryable): Promise<ShopRow[]> {
  return db.query<ShopRow>('SELECT * FROM shops ORDER BY id');
}

export async function countShops(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM shops');
  return row?.n ?? 0;
}

export interface ShopSettings {
  threeDs?: boolean;
  test?: boolean;
  emailNotifications?: boolean;
  notificationEmail?: string | null;
  returnUrl?: string | null;
  timeZone?: string;
  retrySchedule?: RetryScheduleSetting | null;
  quietHours?: QuietHoursSetting | null;
  notificationAuth?: NotificationAuth;
  frameOrigins?: string[] | null;
}

/** jsonb as text: the pg driver would send a JS array as a PostgreSQL array, not as JSON. */
const jsonb = (v: object | null | undefined) => (v === undefined || v === null ? null : JSON.stringify(v));

/**
 * Changes the settings given (undefined: unchanged; null clears a nullable one); the updated row, or
 * undefined when there is no such shop.
 */
export async function updateShopSettings(
  db: Queryable,
  id: number,
  s: ShopSettings,
): Promise<ShopRow | undefined> {
  const [row] = await db.query<ShopRow>(
    `UPDATE shops SET
       three_ds = COALESCE($2, three_ds),
       test = COALESCE($3, test),
       email_notifications = COALESCE($4, email_notifications),
       notification_email = CASE WHEN $5::boolean THEN $6 ELSE notification_email END,
       return_url = CASE WHEN $7::boolean THEN $8 ELSE return_url END,
       time_zone = COALESCE($9, time_zone),
       retry_schedule = CASE WHEN $10::boolean THEN $11::jsonb ELSE retry_schedule END,
       quiet_hours = CASE WHEN $12::boolean THEN $13::jsonb ELSE quiet_hours END,
       notification_auth = COALESCE($14, notification_auth),
       frame_origins = CASE WHEN $15::boolean THEN $16::jsonb ELSE frame_origins END
     WHERE id = $1 RETURNING *`,
    [
      id,
      s.threeDs ?? null,
      s.test ?? null,
      s.emailNotifications ?? null,
      s.notificationEmail !== undefined,
      s.notificationEmail ?? null,
      s.returnUrl !== undefined,
      s.returnUrl ?? null,
      s.timeZone ?? null,
      s.retrySchedule !== undefined,
      jsonb(s.retrySchedule),
      s.quietHours !== undefined,
      jsonb(s.quietHours),
      s.notificationAuth ?? null,
      s.frameOrigins !== undefined,
      jsonb(s.frameOrigins),
    ],
  );
  return row;
}

/**
 * The shop whose public key (the one that verifies its notifications) has the base64 body `body`:
 * the widget's public-key integration names the shop so (migration 038's generated column).
 */
export async function findShopRowByPublicKey(db: Queryable, body: string): Promise<ShopRow | undefined> {
  const rows = await db.query<ShopRow>('SELECT * FROM shops WHERE public_key_body = $1 LIMIT 2', [body]);
  // A key two shops share (made outside Kopek and given to both) names neither.
  return rows.length === 1 ? rows[0] : undefined;
}

/**
 * Moves a test shop's clock to at least `offsetMs` ahead of real time and answers the offset it now
 * has. GREATEST: a test clock never goes back, even when two advances overlap.
 */
export async function moveShopClock(db: Queryable, id: number, offsetMs: number): Promise<number> {
  const [row] = await db.query<{ clock_offset_ms: number }>(
    `UPDATE shops SET clock_offset_ms = GREATEST(clock_offset_ms, $2::bigint)
     WHERE id = $1 AND test RETURNING clock_offset_ms`,
    [id, Math.max(0, Math.round(offsetMs))],
  );
  return row?.clock_offset_ms ?? 0;
}
