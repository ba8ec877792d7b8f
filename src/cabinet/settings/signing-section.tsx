import { CsrfField } from '../../pages/components.js';
import { fill } from '../../pages/lang.js';
import type { ShopSettingsView } from '../../shops/index.js';
import type { CabinetContext } from '../context.js';
import { Code, fillParts, NO_TRANSLATE } from '../words.js';
import { zonedText } from './controls.js';
import { signingTexts } from './signing-texts.js';
import { settingsTexts } from './texts.js';

/**
 * The settings page's part about signed notifications: the webhook signing secret and its rotation,
 * the public key that verifies Content-Signature, and a new key pair waiting to be confirmed. Each
 * button posts to its own address, through the verbs of the API's /shop/… routes.
 */

function Action(p: { cabinet: CabinetContext; action: string; label: string; hint: string; id: string }) {
  return (
    <form method="post" action={`/cabinet/settings/${p.action}`} class="actions">
      <CsrfField token={p.cabinet.csrf} />
      <button type="submit" aria-describedby={p.id}>
        {p.label}
      </button>
      <p class="hint" id={p.id}>
        {p.hint}
      </p>
    </form>
  );
}

export function SigningSection(p: { cabinet: CabinetContext; settings: ShopSettingsView }) {
  const { cabinet, settings } = p;
  const t = settingsTexts(cabinet.lang);
  const s = signingTexts(cabinet.lang);
  const until = settings.webhook_secret_previous_until;
  return (
    <>
      <section aria-labelledby="webhook-secret">
        <h2 id="webhook-secret">{s.webhookSecret}</h2>
        <p class="hint">{fillParts(s.webhookSecretHint, { kopekSignature: <Code>Kopek-Signature</Code> })}</p>
        <input
          id="webhook-secret-value"
          class="copy key"
          readOnly
          value={settings.webhook_secret}
          aria-labelledby="webhook-secret"
          spellcheck={false}
        />
        {until !== null && (
          <p class="notice">
            {fill(s.previousUntil, { until: zonedText(until, settings.time_zone, cabinet.lang) })}
          </p>
        )}
        <Action
          cabinet={cabinet}
          action="webhook-secret"
          label={s.rotateSecret}
          hint={s.rotateSecretHint}
          id="rotate-secret-hint"
        />
      </section>
      <section aria-labelledby="keys">
        <h2 id="keys">{t.keys}</h2>
        <p class="hint">{fillParts(t.keysHint, { contentSignature: <Code>Content-Signature</Code> })}</p>
        <PublicKey id="public-key" pem={settings.public_key} base64={settings.public_key_base64} t={t} />
        {settings.pending_public_key !== null && (
          <>
            <h3 id="pending-key">{s.pending}</h3>
            <p class="hint">{s.pendingHint}</p>
            <PublicKey
              id="pending-key"
              pem={settings.pending_public_key}
              base64={settings.pending_public_key_base64 ?? ''}
              t={t}
            />
            <Action
              cabinet={cabinet}
              action="signing-key/confirm"
              label={s.confirmKey}
              hint={s.pendingHint}
              id="confirm-key-hint"
            />
          </>
        )}
        <Action
          cabinet={cabinet}
          action="signing-key"
          label={s.rotateKey}
          hint={s.rotateKeyHint}
          id="rotate-key-hint"
        />
      </section>
    </>
  );
}

/** A public key as PEM and as base64, each in a field to copy; `id` prefixes the fields' ids. */
function PublicKey(p: { id: string; pem: string; base64: string; t: { pem: string; base64: string } }) {
  return (
    <>
      <label for={`${p.id}-pem`}>{p.t.pem}</label>
      <textarea id={`${p.id}-pem`} class="copy key" readOnly rows={9} spellcheck={false} {...NO_TRANSLATE}>
        {p.pem}
      </textarea>
      <label for={`${p.id}-base64`}>{p.t.base64}</label>
      <textarea id={`${p.id}-base64`} class="copy key" readOnly rows={7} spellcheck={false} {...NO_TRANSLATE}>
        {p.base64}
      </textarea>
    </>
  );
}
