import { DateTime } from 'luxon';
import { defineTexts, type PageLang } from '../../pages/lang.js';
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

type Unit = 'hour' | 'day' | 'week' | 'month' | 'year';
type Forms = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

/** Each unit's words by plural category (Intl.PluralRules): "1 month", "2 месяца", "5 месяцев". */
const UNITS: Record<PageLang, Record<Unit, Forms>> = {
  en: {
    hour: { one: 'hour', other: 'hours' },
    day: { one: 'day', other: 'days' },
    week: { one: 'week', other: 'weeks' },
    month: { one: 'month', other: 'months' },
    year: { one: 'year', other: 'years' },
  },
  ru: {
    hour: { one: 'час', few: 'часа', many: 'часов', other: 'часа' },
    day: { one: 'день', few: 'дня', many: 'дней', other: 'дня' },
    week: { one: 'неделя', few: 'недели', many: 'недель', other: 'недели' },
    month: { one: 'месяц', few: 'месяца', many: 'месяцев', other: 'месяца' },
    year: { one: 'год', few: 'года', many: 'лет', other: 'года' },
  },
};

/** "раз в неделю": a single unit after "в" takes the accusative. */
const RU_ONCE_A: Record<Unit, string> = {
  hour: 'час',
  day: 'день',
  week: 'неделю',
  month: 'месяц',
  year: 'год',
};

const PLURALS: Record<PageLang, Intl.PluralRules> = {
  en: new Intl.PluralRules('en'),
  ru: new Intl.PluralRules('ru'),
};

const unitOf = (unit: string): Unit | undefined => (unit in UNITS.en ? (unit as Unit) : undefined);

/** "1 month", "3 дня", "5 месяцев": the count with its unit in the language's plural form. */
export function periodText(n: number, unit: string, lang: PageLang): string {
  const u = unitOf(unit);
  if (!u) return `${n} ${unit}`;
  const forms = UNITS[lang][u];
  return `${n} ${forms[PLURALS[lang].select(n)] ?? forms.other}`;
}

/**
 * How often a plan charges: "every month", "every 3 months"; in Russian "раз в месяц", "каждые 2
 * месяца", "каждые 5 месяцев", "каждый 21 день".
 */
export function everyText(n: number, unit: string, lang: PageLang): string {
  const u = unitOf(unit);
  if (lang === 'en') return n === 1 && u ? `every ${u}` : `every ${periodText(n, unit, lang)}`;
  if (n === 1 && u) return `раз в ${RU_ONCE_A[u]}`;
  return `${PLURALS.ru.select(n) === 'one' ? 'каждый' : 'каждые'} ${periodText(n, unit, lang)}`;
}

/** A charge attempt's status, in words. */
const chargeStatusTexts = defineTexts({
  en: {
    pending: 'pending',
    unknown: 'no answer yet',
    successful: 'successful',
    failed: 'failed',
    incomplete: 'incomplete',
    error: 'error',
  },
  ru: {
    pending: 'ожидает ответа',
    unknown: 'ответа пока нет',
    successful: 'успешно',
    failed: 'отклонено',
    incomplete: 'не завершено',
    error: 'ошибка',
  },
});

/** A notification's delivery status, in words. */
const deliveryStatusTexts = defineTexts({
  en: { pending: 'pending', delivered: 'delivered', failed: 'failed', none: 'not sent' },
  ru: {
    pending: 'ожидает доставки',
    delivered: 'доставлено',
    failed: 'не доставлено',
    none: 'не отправлялось',
  },
});

export const chargeStatusName = (lang: PageLang, status: string): string =>
  (chargeStatusTexts(lang) as Record<string, string>)[status] ?? status;

export const deliveryStatusName = (lang: PageLang, status: string): string =>
  (deliveryStatusTexts(lang) as Record<string, string>)[status] ?? status;

/** A subscription state as a coloured badge with its name in words. */
export function StateBadge({ state, lang }: { state: string; lang: PageLang }) {
  const names = stateTexts(lang) as Record<string, string>;
  return <span class={`badge ${state}`}>{names[state] ?? state}</span>;
}
