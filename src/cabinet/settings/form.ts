import type { ErrorTree } from '../../core/errors.js';
import type { ShopSettingsView } from '../../shops/index.js';

/**
 * The settings form's fields as text, and the body `PATCH /shop` takes made from them: every field
 * is sent (a form always names them all), an empty address clears it, empty retry delays keep
 * Kopek's rule and empty quiet hours mean none.
 */
export interface SettingsForm {
  three_d_secure: boolean;
  email_notifications: boolean;
  notification_email: string;
  return_url: string;
  time_zone: string;
  retry_failed: string;
  retry_error: string;
  quiet_start: string;
  quiet_end: string;
  notification_auth: string;
}

export type FormErrors = Partial<Record<keyof SettingsForm | 'retry' | 'quiet' | 'base', string>>;

export function formOf(s: ShopSettingsView): SettingsForm {
  return {
    three_d_secure: s.three_d_secure,
    email_notifications: s.email_notifications,
    notification_email: s.notification_email ?? '',
    return_url: s.return_url ?? '',
    time_zone: s.time_zone,
    retry_failed: s.retry_schedule?.failed?.join(', ') ?? '',
    retry_error: s.retry_schedule?.error?.join(', ') ?? '',
    quiet_start: s.quiet_hours?.start ?? '',
    quiet_end: s.quiet_hours?.end ?? '',
    notification_auth: s.notification_auth,
  };
}

const text = (body: Record<string, unknown>, name: string) => {
  const v = body[name];
  return typeof v === 'string' ? v.trim().slice(0, 4096) : '';
};

export function formFromBody(body: unknown): SettingsForm {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  return {
    three_d_secure: b.three_d_secure === 'on',
    email_notifications: b.email_notifications === 'on',
    notification_email: text(b, 'notification_email'),
    return_url: text(b, 'return_url'),
    time_zone: text(b, 'time_zone'),
    retry_failed: text(b, 'retry_failed'),
    retry_error: text(b, 'retry_error'),
    quiet_start: text(b, 'quiet_start'),
    quiet_end: text(b, 'quiet_end'),
    notification_auth: text(b, 'notification_auth'),
  };
}

const delays = (list: string) =>
  list
    .split(/[\s,;]+/)
    .map((d) => d.trim())
    .filter((d) => d !== '');

/** The body of `PATCH /shop` the form asks for. */
export function settingsBody(f: SettingsForm): Record<string, unknown> {
  const failed = delays(f.retry_failed);
  const error = delays(f.retry_error);
  return {
    three_d_secure: f.three_d_secure,
    email_notifications: f.email_notifications,
    notification_email: f.notification_email === '' ? null : f.notification_email,
    return_url: f.return_url === '' ? null : f.return_url,
    time_zone: f.time_zone,
    retry_schedule:
      failed.length === 0 && error.length === 0
        ? null
        : { ...(failed.length ? { failed } : {}), ...(error.length ? { error } : {}) },
    quiet_hours:
      f.quiet_start === '' && f.quiet_end === '' ? null : { start: f.quiet_start, end: f.quiet_end },
    // A form without the choice (an older page) leaves it as it is.
    ...(f.notification_auth === '' ? {} : { notification_auth: f.notification_auth }),
  };
}

const first = (tree: ErrorTree, key: string): string | undefined => {
  const v = tree[key];
  return Array.isArray(v) ? v.join('; ') : undefined;
};

/**
 * The verb's 422 errors beside the fields they concern, in the page's words where the field has one
 * kind of mistake; the retry schedule and quiet hours keep the verb's own explanation.
 */
export function formErrors(
  tree: ErrorTree,
  t: {
    emailInvalid: string;
    emailNeeded: string;
    urlInvalid: string;
    zoneInvalid: string;
    retryInvalid: string;
    quietInvalid: string;
    authInvalid: string;
  },
): FormErrors {
  const errors: FormErrors = {};
  const email = first(tree, 'notification_email');
  if (email) errors.notification_email = email.includes('blank') ? t.emailNeeded : t.emailInvalid;
  if (first(tree, 'return_url')) errors.return_url = t.urlInvalid;
  if (first(tree, 'time_zone')) errors.time_zone = t.zoneInvalid;
  const retry = first(tree, 'retry_schedule');
  if (retry) errors.retry = `${t.retryInvalid}: ${retry}`;
  const quiet = first(tree, 'quiet_hours');
  if (quiet) errors.quiet = `${t.quietInvalid}: ${quiet}`;
  if (first(tree, 'notification_auth')) errors.notification_auth = t.authInvalid;
  for (const key of ['three_d_secure', 'email_notifications'] as const) {
    const m = first(tree, key);
    if (m) errors[key] = m;
  }
  return errors;
}
