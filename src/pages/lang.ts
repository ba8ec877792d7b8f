/**
 * The languages pages speak. A page takes the language its request or record asks for; anything
 * untranslated falls back to English, and the document's `lang` says English, so screen readers and
 * translators know what they read.
 */
export const PAGE_LANGS = ['en', 'ru'] as const;
export type PageLang = (typeof PAGE_LANGS)[number];

export function pageLang(language: string | null | undefined): PageLang {
  const base = language?.toLowerCase().split(/[-_]/)[0];
  return base === 'ru' ? 'ru' : 'en';
}

/**
 * A feature's dictionary: one object per language with the same keys, checked by the compiler
 * (a text missing in Russian is a type error, not a blank on the page).
 */
export function defineTexts<T extends Record<string, string>>(texts: {
  en: T;
  ru: { [K in keyof T]: string };
}) {
  TEXT_CATALOG.push(texts);
  return (lang: PageLang): { [K in keyof T]: string } => texts[lang];
}

/**
 * Every dictionary defined so far (each module's, as it is imported): the catalog a test reads to
 * check that every key has a text in every language and that no Russian text is left in English.
 */
export const TEXT_CATALOG: Array<Record<PageLang, Record<string, string>>> = [];

/** Fills `{name}` placeholders of a text; the values are text too, escaped later by the renderer. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}
