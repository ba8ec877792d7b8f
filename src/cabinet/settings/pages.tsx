import { CsrfField, Details, ErrorSummary, Field } from '../../pages/components.js';
import type { ShopSettingsView } from '../../shops/index.js';
import type { CabinetContext } from '../context.js';
import { CabinetPage } from '../layout.js';
import { Code, fillParts } from '../words.js';
import { Checkbox } from './controls.js';
import type { FormErrors, SettingsForm } from './form.js';
import { SigningSection } from './signing-section.js';
import { signingTexts } from './signing-texts.js';
import { settingsTexts } from './texts.js';

/** Every IANA zone this runtime knows, UTC first; the shop's own is kept even if unlisted. */
function zoneOptions(current: string): Array<readonly [string, string]> {
  const zones = new Set(['UTC', ...Intl.supportedValuesOf('timeZone')]);
  zones.add(current);
  return [...zones].map((z) => [z, z] as const);
}

export function SettingsPage(p: {
  cabinet: CabinetContext;
  settings: ShopSettingsView;
  form: SettingsForm;
  errors: FormErrors;
  saved: boolean;
  /** What a key action just did, said at the top. */
  notice?: string | undefined;
}) {
  const { cabinet, settings, form, errors } = p;
  const t = settingsTexts(cabinet.lang);
  const s = signingTexts(cabinet.lang);
  const messages = Object.values(errors).filter((m): m is string => typeof m === 'string');
  const retryOnError = errors.retry?.includes(': error ') ?? false;
  const quietOnEnd = errors.quiet?.includes(': end ') ?? false;
  return (
    <CabinetPage cabinet={cabinet} title={t.title} section="settings">
      {p.saved && (
        <p class="notice" role="status">
          {t.saved}
        </p>
      )}
      {p.notice && (
        <p class="notice" role="status">
          {p.notice}
        </p>
      )}
      <ErrorSummary title={t.problems} errors={messages} />
      <Details
        rows={[
          [t.shop, settings.name],
          [t.shopId, <span class="copy">{String(settings.id)}</span>],
        ]}
      />
      {settings.test && (
        <p>
          <a href="/cabinet/test-clock">{t.testClockLink}</a>
        </p>
      )}
      <form method="post" action="/cabinet/settings" class="settings" novalidate>
        <CsrfField token={cabinet.csrf} />
        <fieldset>
          <legend>{t.payments}</legend>
          <Checkbox
            name="three_d_secure"
            label={t.threeDs}
            checked={form.three_d_secure}
            hint={t.threeDsHint}
            error={errors.three_d_secure}
          />
          <Field
            name="return_url"
            label={t.returnUrl}
            type="url"
            autocomplete="url"
            value={form.return_url}
            hint={t.returnUrlHint}
            error={errors.return_url}
            maxLength={2048}
            size="wide"
          />
        </fieldset>
        <fieldset>
          <legend>{t.email}</legend>
          <Checkbox
            name="email_notifications"
            label={t.emailOn}
            checked={form.email_notifications}
            error={errors.email_notifications}
          />
          <Field
            name="notification_email"
            label={t.emailAddress}
            type="email"
            autocomplete="email"
            value={form.notification_email}
            error={errors.notification_email}
            maxLength={254}
          />
        </fieldset>
        <fieldset>
          <legend>{t.billing}</legend>
          <Field
            name="time_zone"
            label={t.timeZone}
            value={form.time_zone}
            options={zoneOptions(form.time_zone)}
            verbatim
            hint={t.timeZoneHint}
            error={errors.time_zone}
          />
          <fieldset class="group">
            <legend>{t.retry}</legend>
            <p class="hint">{t.retryHint}</p>
            <Field
              name="retry_failed"
              label={t.retryFailed}
              value={form.retry_failed}
              placeholder="P1D, P3D, P7D"
              error={retryOnError ? undefined : errors.retry}
              maxLength={1000}
            />
            <Field
              name="retry_error"
              label={t.retryError}
              value={form.retry_error}
              placeholder="PT1H, PT6H, P1D"
              error={retryOnError ? errors.retry : undefined}
              maxLength={1000}
            />
          </fieldset>
          <fieldset class="group">
            <legend>{t.quiet}</legend>
            <p class="hint">{t.quietHint}</p>
            <div class="row">
              <Field
                name="quiet_start"
                label={t.quietStart}
                value={form.quiet_start}
                placeholder="20:00"
                size="short"
                maxLength={5}
                error={quietOnEnd ? undefined : errors.quiet}
              />
              <Field
                name="quiet_end"
                label={t.quietEnd}
                value={form.quiet_end}
                placeholder="08:00"
                size="short"
                maxLength={5}
                error={quietOnEnd ? errors.quiet : undefined}
              />
            </div>
          </fieldset>
        </fieldset>
        <fieldset>
          <legend>{s.notifications}</legend>
          <Field
            name="notification_auth"
            label={s.auth}
            value={form.notification_auth}
            options={[
              ['basic', s.authBasic],
              ['signature', s.authSignature],
            ]}
            hint={fillParts(s.authHint, {
              contentSignature: <Code>Content-Signature</Code>,
              kopekSignature: <Code>Kopek-Signature</Code>,
            })}
            error={errors.notification_auth}
          />
        </fieldset>
        <button type="submit" class="primary">
          {t.save}
        </button>
      </form>
      <SigningSection cabinet={cabinet} settings={settings} />
    </CabinetPage>
  );
}
