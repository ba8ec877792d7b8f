import { DateTime } from 'luxon';
import type { PageLang } from '../../pages/lang.js';

/**
 * Form controls and a time display the notifications, e-mails and settings pages share: a labelled
 * select and checkbox wired like `Field` (hint and error announced with them), and instants shown on
 * the shop's own calendar.
 */

export interface SelectProps {
  name: string;
  label: string;
  value: string;
  options: ReadonlyArray<readonly [value: string, label: string]>;
  hint?: string | undefined;
  error?: string | undefined;
}

export function Select(p: SelectProps) {
  const id = `f-${p.name}`;
  const described = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${p.error ? ' invalid' : ''}`}>
      <label for={id}>{p.label}</label>
      <select
        id={id}
        name={p.name}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described || undefined}
      >
        {p.options.map(([value, label]) => (
          <option value={value} selected={value === p.value}>
            {label}
          </option>
        ))}
      </select>
      {p.hint && (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      )}
      {p.error && (
        <p class="error" id={`${id}-error`}>
          {p.error}
        </p>
      )}
    </div>
  );
}

export function Checkbox(p: {
  name: string;
  label: string;
  checked: boolean;
  hint?: string;
  error?: string;
}) {
  const id = `f-${p.name}`;
  const described = [p.hint ? `${id}-hint` : '', p.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field check${p.error ? ' invalid' : ''}`}>
      <input
        type="checkbox"
        id={id}
        name={p.name}
        value="on"
        checked={p.checked}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={described || undefined}
      />
      <label for={id}>{p.label}</label>
      {p.hint && (
        <p class="hint" id={`${id}-hint`}>
          {p.hint}
        </p>
      )}
      {p.error && (
        <p class="error" id={`${id}-error`}>
          {p.error}
        </p>
      )}
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
