/**
 * A shop's own settings (decisions.md, The shop's own settings): read with `GET /shop`, changed with
 * `PATCH /shop` and `kopek shop update`. The same verbs serve both.
 */
import { type Static, type TSchema, Type } from 'typebox';
import { parseQuietHours, parseRetrySchedule, parseTimeZone } from '../calendar/retry-settings.js';
import { canonicalTimeZone } from '../calendar/zoned-time.js';
import { type Clock, isoString } from '../clock.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { isEmail, isHttpUrl } from '../core/rules.js';
import { addFormat, checkBody, enforced, type RuleCheck, withRules } from '../core/schema-check.js';
import { BLANK_IS_VALUE, MESSAGES } from '../core/schema-errors.js';
import type { MasterKeys } from '../crypto/keyring.js';
import type { Queryable } from '../db/db.js';
import { webhookSecretEnc } from './notification-keys.js';
import {
  findShopRow,
  NOTIFICATION_AUTHS,
  type NotificationAuth,
  type QuietHoursSetting,
  type RetryScheduleSetting,
  type ShopRow,
  type ShopSettings,
  updateShopSettings,
} from './repository.js';
import { openWebhookSecret } from './webhook-secret.js';

export interface ShopSettingsView {
  id: number;
  name: string;
  test: boolean;
  three_d_secure: boolean;
  email_notifications: boolean;
  notification_email: string | null;
  return_url: string | null;
  time_zone: string;
  retry_schedule: RetryScheduleSetting | null;
  quiet_hours: QuietHoursSetting | null;
  /** Verifies the Content-Signature of notifications, PEM. */
  public_key: string;
  /** The same key as the bare base64 body of the PEM, the form the platform's client libraries take. */
  public_key_base64: string;
  /** `basic`: HTTP Basic on notifications to https URLs; `signature`: no credentials at all. */
  notification_auth: NotificationAuth;
  /** The HMAC key of the Kopek-Signature header. */
  webhook_secret: string;
  /** Until when (the shop's clock) the secret it replaced signs beside it; null when none does. */
  webhook_secret_previous_until: string | null;
  /** A new key pair's public key, shown before it signs; null when none is pending. */
  pending_public_key: string | null;
  pending_public_key_base64: string | null;
  /** The origins that may frame the shop's checkout pages; null: any site (docs/embedding.md). */
  frame_origins: string[] | null;
}

/** What reading the settings needs: the store, and the master key and clock for the webhook secret. */
export interface SettingsDeps {
  db: Queryable;
  masterKey: MasterKeys;
  clock: Clock;
}

const MAX_URL = 2048;
const TIME_ZONE = 'is not an IANA time zone such as Europe/Minsk or UTC';

/** The base64 body of a PEM: its lines between the BEGIN and END lines, joined. */
export function pemBody(pem: string): string {
  return pem
    .replace(/-----(BEGIN|END) [A-Z ]+-----/g, '')
    .replace(/\s+/g, '')
    .trim();
}

/**
 * The shop's settings as the API answers them. An older shop without a webhook secret is given one
 * here, so what GET /shop shows is what signs.
 */
export async function settingsView(deps: SettingsDeps, row: ShopRow): Promise<ShopSettingsView> {
  const secret = openWebhookSecret(deps.masterKey, await webhookSecretEnc(deps, row));
  const shopNow = deps.clock.now().getTime() + row.clock_offset_ms;
  const until = row.webhook_secret_prev_until;
  return {
    id: row.id,
    name: row.name,
    test: row.test,
    three_d_secure: row.three_ds,
    email_notifications: row.email_notifications,
    notification_email: row.notification_email,
    return_url: row.return_url,
    time_zone: row.time_zone,
    retry_schedule: row.retry_schedule,
    quiet_hours: row.quiet_hours,
    public_key: row.public_key,
    public_key_base64: pemBody(row.public_key),
    notification_auth: row.notification_auth,
    webhook_secret: secret,
    webhook_secret_previous_until:
      until !== null && row.webhook_secret_prev_enc !== null && until.getTime() > shopNow
        ? isoString(until)
        : null,
    pending_public_key: row.pending_public_key,
    pending_public_key_base64: row.pending_public_key === null ? null : pemBody(row.pending_public_key),
    frame_origins: row.frame_origins ?? null,
  };
}

export async function getShopSettings(deps: SettingsDeps, shopId: number): Promise<ShopSettingsView> {
  const row = await findShopRow(deps.db, shopId);
  if (!row) throw ApiError.notFound();
  return settingsView(deps, row);
}

addFormat('padded-email', (v) => isEmail(v.trim()));
addFormat('padded-http-url', (v) => v.trim().length <= MAX_URL && isHttpUrl(v.trim()));
addFormat('time-zone', (v) => canonicalTimeZone(v.trim()) !== undefined);
addFormat('web-origin', (v) => webOrigin(v) !== undefined);

/** The most origins a shop may name as allowed to frame its checkout pages. */
export const MAX_FRAME_ORIGINS = 20;
const ORIGIN_MESSAGE = 'must be an origin: http(s)://host[:port], no path, query or fragment';

/** `https://shop.example` as its origin; undefined for anything else (a path, a query, a wildcard). */
export function webOrigin(text: string): string | undefined {
  const v = text.trim();
  if (v.length > 255) return undefined;
  try {
    const url = new URL(v);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
    // "https://shop.example/" is the origin as written with a slash; anything more is a path.
    if (!/^https?:\/\/[^/?#]+\/?$/i.test(v)) return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** A setting as PATCH takes it: null is a value (clear it, or not allowed), never "unchanged". */
const Setting = <T extends TSchema>(schema: T, message?: string) =>
  Type.Optional(
    Type.Unsafe<Static<T>>({
      ...schema,
      [BLANK_IS_VALUE]: true,
      ...(message ? { [MESSAGES]: { type: message, format: message, anyOf: message } } : {}),
    }),
  );

const URL_MESSAGE = 'must be an absolute http(s) URL';

/** The retry schedule and the quiet hours, read as the cabinet reads them: their messages name the part. */
function scheduleAndHours(body: Record<string, unknown>, check: RuleCheck): void {
  for (const [field, parse] of [
    ['retry_schedule', parseRetrySchedule],
    ['quiet_hours', parseQuietHours],
  ] as const) {
    if (body[field] === undefined) continue;
    const parsed = parse(body[field]);
    if (!parsed.ok) for (const message of parsed.errors) check.add(field, message);
  }
}

/**
 * `PATCH /shop` (and `kopek shop update`): any of the settings; fields not named stay as they are,
 * null clears the nullable ones (the platform's rule for retries, no quiet hours), other fields are
 * ignored, as everywhere in the API. The schema states each field's rule; the retry schedule's and
 * quiet hours' parts are read beside it (calendar/retry-settings.ts, shared with the cabinet).
 */
export const ShopSettingsInput = enforced(
  withRules(
    Type.Object(
      {
        three_d_secure: Setting(Type.Boolean()),
        email_notifications: Setting(Type.Boolean({ description: 'needs notification_email' })),
        notification_email: Setting(Type.Union([Type.String({ format: 'padded-email' }), Type.Null()])),
        return_url: Setting(
          Type.Union([
            Type.String({
              format: 'padded-http-url',
              description: 'Absolute http(s) URL: where buyers return by default',
            }),
            Type.Null(),
          ]),
          URL_MESSAGE,
        ),
        notification_auth: Type.Optional(
          Type.Unsafe<NotificationAuth>({
            type: 'string',
            enum: [...NOTIFICATION_AUTHS],
            [BLANK_IS_VALUE]: true,
            [MESSAGES]: {
              type: `must be one of: ${NOTIFICATION_AUTHS.join(', ')}`,
              enum: `must be one of: ${NOTIFICATION_AUTHS.join(', ')}`,
            },
            description:
              'basic: notifications carry HTTP Basic shop_id:secret_key, over https only; signature: no credentials (verify Kopek-Signature and Content-Signature)',
          }),
        ),
        time_zone: Setting(
          Type.String({
            format: 'time-zone',
            description: 'IANA name, e.g. Europe/Minsk: billing dates follow its calendar',
          }),
          TIME_ZONE,
        ),
        retry_schedule: Type.Optional(
          Type.Unknown({
            description:
              "{failed?, error?}: 1 to 20 ISO 8601 durations each, PT1M to P30D, the last repeating (a bare list is both); null: the platform's rule",
          }),
        ),
        quiet_hours: Type.Optional(
          Type.Unknown({
            description:
              '{start, end}: local hours (HH:MM) in which no renewal is charged, start after end crossing midnight; null: none',
          }),
        ),
        frame_origins: Setting(
          Type.Union([
            Type.Array(Type.String({ format: 'web-origin', [MESSAGES]: { format: ORIGIN_MESSAGE } }), {
              maxItems: MAX_FRAME_ORIGINS,
              description: `Origins (https://shop.example) that may frame the shop's checkout pages, at most ${MAX_FRAME_ORIGINS}; null or absent: any site; [] none`,
            }),
            Type.Null(),
          ]),
        ),
      },
      { description: 'Any of the settings; fields not given stay as they are, unknown fields are ignored' },
    ),
    scheduleAndHours,
  ),
);

/** The changes a body asks for (ShopSettingsInput), every broken rule reported at once. */
export function parseSettings(body: Record<string, unknown>): ShopSettings {
  const errors = new ErrorCollector();
  if (!checkBody(ShopSettingsInput, body, errors)) errors.throwIfAny();
  const s: ShopSettings = {};
  const trimmed = (v: unknown) => (typeof v === 'string' ? v.trim() : null);
  if (typeof body.three_d_secure === 'boolean') s.threeDs = body.three_d_secure;
  if (typeof body.email_notifications === 'boolean') s.emailNotifications = body.email_notifications;
  if (body.notification_email !== undefined) s.notificationEmail = trimmed(body.notification_email);
  if (body.return_url !== undefined) s.returnUrl = trimmed(body.return_url);
  if (body.notification_auth !== undefined) s.notificationAuth = body.notification_auth as NotificationAuth;
  if (body.frame_origins !== undefined)
    s.frameOrigins = Array.isArray(body.frame_origins)
      ? [...new Set(body.frame_origins.map((o) => webOrigin(String(o)) as string))]
      : null;
  const parsers = [
    ['time_zone', parseTimeZone, 'timeZone'],
    ['retry_schedule', parseRetrySchedule, 'retrySchedule'],
    ['quiet_hours', parseQuietHours, 'quietHours'],
  ] as const;
  for (const [field, parse, key] of parsers) {
    if (body[field] === undefined) continue;
    const parsed = parse(body[field]);
    if (parsed.ok) Object.assign(s, { [key]: parsed.value });
  }
  return s;
}

/**
 * Applies the changes `body` asks for and answers the settings as they now are. E-mail
 * notifications need an address to go to, whichever request set either.
 */
export async function changeShopSettings(
  deps: SettingsDeps,
  shopId: number,
  body: Record<string, unknown>,
): Promise<ShopSettingsView> {
  const { db } = deps;
  const changes = parseSettings(body);
  const current = await findShopRow(db, shopId);
  if (!current) throw ApiError.notFound();
  const notifying = changes.emailNotifications ?? current.email_notifications;
  const address =
    changes.notificationEmail !== undefined ? changes.notificationEmail : current.notification_email;
  if (notifying && !address) {
    throw ApiError.validation({ notification_email: ["can't be blank while email_notifications is on"] });
  }
  const row = await updateShopSettings(db, shopId, changes);
  if (!row) throw ApiError.notFound();
  return settingsView(deps, row);
}
