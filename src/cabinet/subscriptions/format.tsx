import { DateTime } from 'luxon';
import type { PageLang } from '../../pages/lang.js';
import { stateTexts } from './texts.js';

/**
 * How the overview and the subscription pages show times, periods and states: times in the shop's
 * zone with the zone's short name beside them, so "14:05" never leaves the reader guessing.
 */

export function shopDateTime(at: Date | string, zone: string, lang: PageLang): DateTime {
  const d = typeof at === 'string' ? DateTime.fromISO(at) : DateTime.fromJSDate(at);
  return d.setZone(zone).setLocale(lang);
}

export function formatShopTime(at: Date | string, zone: string, lang: PageLang): string {
  return shopDateTime(at, zone, lang).toFormat('d LLL yyyy, HH:mm ZZZZ');
}

/** A time in the shop's zone, machine-readable too. */
export function ShopTime({ at, zone, lang }: { at: Date | string | null; zone: string; lang: PageLang }) {
  if (at === null) return <span class="muted">—</span>;
  const d = shopDateTime(at, zone, lang);
  return <time datetime={d.toUTC().toISO() ?? undefined}>{formatShopTime(at, zone, lang)}</time>;
}

const UNITS: Record<PageLang, Record<string, [string, string, string]>> = {
  en: {
    hour: ['hour', 'hours', 'hours'],
    day: ['day', 'days', 'days'],
    week: ['week', 'weeks', 'weeks'],
    month: ['month', 'months', 'months'],
    year: ['year', 'years', 'years'],
  },
  ru: {
    hour: ['час', 'часа', 'часов'],
    day: ['день', 'дня', 'дней'],
    week: ['неделя', 'недели', 'недель'],
    month: ['месяц', 'месяца', 'месяцев'],
    year: ['год', 'года', 'лет'],
  },
};

/** "1 month", "3 дня": the count with its unit in the language's plural form. */
export function periodText(n: number, unit: string, lang: PageLang): string {
  const forms = UNITS[lang][unit];
  if (!forms) return `${n} ${unit}`;
  if (lang === 'en') return `${n} ${n === 1 ? forms[0] : forms[1]}`;
  const mod10 = n % 10;
  const mod100 = n % 100;
  const form =
    mod10 === 1 && mod100 !== 11
      ? forms[0]
      : mod10 >= 2 && mod10 <= 4 && (mod100 < 12 || mod100 > 14)
        ? forms[1]
        : forms[2];
  return `${n} ${form}`;
}

/** A subscription state as a coloured badge with its name in words. */
export function StateBadge({ state, lang }: { state: string; lang: PageLang }) {
  const names = stateTexts(lang) as Record<string, string>;
  return <span class={`badge ${state}`}>{names[state] ?? state}</span>;
}
