/**
 * A shop's own settings (decisions.md, The shop's own settings): read with `GET /shop`, changed with
 * `PATCH /shop` and `kopek shop update`. The same verbs serve both.
 */
import { parseQuietHours, parseRetrySchedule, parseTimeZone } from '../calendar/retry-settings.js';
import { type Clock, isoString } from '../clock.js';
import { ApiError, ErrorCollector } from '../core/errors.js';
import { isEmail, isHttpUrl, Msg } from '../core/rules.js';
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
}

/** What reading the settings needs: the store, and the master key and clock for the webhook secret. */
export interface SettingsDeps {
  db: Queryable;
  masterKey: MasterKeys;
  clock: Clock;
}

const MAX_URL = 2048;

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
  };
}

export async function getShopSettings(deps: SettingsDeps, shopId: number): Promise<ShopSettingsView> {
  const row = await findShopRow(deps.db, shopId);
  if (!row) throw ApiError.notFound();
  return settingsView(deps, row);
}

/**
 * The changes a body asks for, every broken rule reported at once. Fields not named stay as they
 * are; null clears the nullable ones (the platform's rule for retries, no quiet hours); fields
 * other than the settings are ignored, as everywhere in the API.
 */
export function parseSettings(body: Record<string, unknown>): ShopSettings {
  const errors = new ErrorCollector();
  const s: ShopSettings = {};
  const boolean = (field: string) => {
    const v = body[field];
    if (v === undefined) return undefined;
    if (typeof v === 'boolean') return v;
    errors.add(field, Msg.notBoolean);
    return undefined;
  };
  /** A string that passes `ok`, or null to clear. */
  const clearable = (field: string, ok: (v: string) => boolean, message: string) => {
    const v = body[field];
    if (v === undefined || v === null) return v;
    if (typeof v === 'string' && ok(v.trim())) return v.trim();
    errors.add(field, message);
    return undefined;
  };
  const threeDs = boolean('three_d_secure');
  if (threeDs !== undefined) s.threeDs = threeDs;
  const emailNotifications = boolean('email_notifications');
  if (emailNotifications !== undefined) s.emailNotifications = emailNotifications;
  const email = clearable('notification_email', isEmail, Msg.invalid);
  if (email !== undefined) s.notificationEmail = email;
  const url = (v: string) => v.length <= MAX_URL && isHttpUrl(v);
  const returnUrl = clearable('return_url', url, 'must be an absolute http(s) URL');
  if (returnUrl !== undefined) s.returnUrl = returnUrl;
  const auth = body.notification_auth;
  if (auth !== undefined) {
    if (typeof auth === 'string' && (NOTIFICATION_AUTHS as readonly string[]).includes(auth))
      s.notificationAuth = auth as NotificationAuth;
    else errors.add('notification_auth', `must be one of: ${NOTIFICATION_AUTHS.join(', ')}`);
  }
  const parsers = [
    ['time_zone', parseTimeZone, 'timeZone'],
    ['retry_schedule', parseRetrySchedule, 'retrySchedule'],
    ['quiet_hours', parseQuietHours, 'quietHours'],
  ] as const;
  for (const [field, parse, key] of parsers) {
    if (body[field] === undefined) continue;
    const parsed = parse(body[field]);
    if (parsed.ok) Object.assign(s, { [key]: parsed.value });
    else for (const message of parsed.errors) errors.add(field, message);
  }
  errors.throwIfAny();
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
