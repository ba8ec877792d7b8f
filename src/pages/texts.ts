import { defineTexts, type PageLang } from './lang.js';

/** The words every hosted page shares: one test banner, one language switch. */
export const pageTexts = defineTexts({
  en: {
    testBanner: 'Test mode: no real money is charged',
    language: 'Language',
  },
  ru: {
    testBanner: 'Тестовый режим: настоящие деньги не списываются',
    language: 'Язык',
  },
});

/** Each language by its own name: the switch offers "Русский" on an English page, "English" on a Russian one. */
export const LANGUAGE_NAMES: Record<PageLang, string> = { en: 'English', ru: 'Русский' };
