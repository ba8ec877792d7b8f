import { DateTime } from 'luxon';
import { describedBy, FieldNotes } from '../../pages/components.js';
import type { PageLang } from '../../pages/lang.js';

/**
 * A form control and a time display the notifications, e-mails and settings pages share: a labelled
 * checkbox wired like `Field` (hint and error announced with it), and instants shown on the shop's own
 * calendar.
 */

/** A labelled checkbox, its hint and error wired like `Field`'s (a select is a `Field` with options). */
export function Checkbox(p: {
  name: string;
  label: string;
  checked: boolean;
  hint?: string;
  error?: string;
}) {
  const id = `f-${p.name}`;
  return (
    <div class={`field check${p.error ? ' invalid' : ''}`}>
      <input
        type="checkbox"
        id={id}
        name={p.name}
        value="on"
        checked={p.checked}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={describedBy(id, p.hint, p.error)}
      />
      <label for={id}>{p.label}</label>
      <FieldNotes id={id} hint={p.hint} error={p.error} />
    </div>
  );
}

/** An instant on the shop's calendar, e.g. "3 Mar 2026, 14:05:09"; the page names the zone. */
export function zonedText(at: Date | string, zone: string, lang: PageLang): string {
  const d = typeof at === 'string' ? DateTime.fromISO(at) : DateTime.fromJSDate(at);
  return d.setZone(zone).setLocale(lang).toFormat('d LLL yyyy, HH:mm:ss');
}

export function When({ at, zone, lang }: { at: Date | string | null; zone: string; lang: PageLang }) {
  if (at === null) return <span class="muted">—</span>;
  const iso = typeof at === 'string' ? at : at.toISOString();
  return <time datetime={iso}>{zonedText(at, zone, lang)}</time>;
}

/** The zone's name and its present offset, e.g. "Europe/Minsk (UTC+03:00)". */
export function zoneLabel(zone: string, now: Date): string {
  if (zone === 'UTC') return zone;
  const offset = DateTime.fromJSDate(now).setZone(zone).toFormat('ZZ');
  return `${zone} (UTC${offset})`;
}
