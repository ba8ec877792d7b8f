import { describe, expect, it } from 'vitest';
import { cardLabels } from '../../src/checkout/form-errors.js';
import { productTexts } from '../../src/checkout/product/texts.js';
import { checkoutTexts } from '../../src/checkout/texts.js';
import '../../src/compose/app.js';
import { threeDsTexts } from '../../src/gateway/three-ds-texts.js';
import { cardFormTexts } from '../../src/pages/card-form.js';
import { PAGE_LANGS, TEXT_CATALOG } from '../../src/pages/lang.js';
import { problemTexts } from '../../src/pages/problem.js';
import { pageTexts } from '../../src/pages/texts.js';
import { englishWords } from './words.js';

/**
 * The catalog of every page's words (each defineTexts dictionary, the app's whole set once it is
 * imported): every key has a text in every language, a translation fills only the placeholders the
 * code gives, and the buyer's pages say nothing in English on a Russian page.
 */

const placeholders = (text: string) => new Set(text.match(/\{\w+\}/g) ?? []);

/** The hosted pages' dictionaries: what buyers read. */
const HOSTED = [
  checkoutTexts,
  productTexts,
  threeDsTexts,
  cardFormTexts,
  problemTexts,
  pageTexts,
  cardLabels,
];

describe('the texts catalog', () => {
  it('holds every dictionary of the pages', () => {
    expect(TEXT_CATALOG.length).toBeGreaterThanOrEqual(HOSTED.length);
    for (const texts of HOSTED) expect(TEXT_CATALOG.map((d) => d.en)).toContain(texts('en'));
  });

  it('has every key in every language, none of them empty', () => {
    for (const dictionary of TEXT_CATALOG) {
      const keys = Object.keys(dictionary.en).sort();
      for (const lang of PAGE_LANGS) {
        expect(Object.keys(dictionary[lang]).sort()).toEqual(keys);
        for (const key of keys) expect(dictionary[lang][key]?.trim(), `${lang}.${key}`).not.toBe('');
      }
    }
  });

  it('fills in Russian only the placeholders the English text has (else a raw {key} shows)', () => {
    for (const dictionary of TEXT_CATALOG) {
      for (const [key, en] of Object.entries(dictionary.en)) {
        const given = placeholders(en);
        for (const name of placeholders(dictionary.ru[key] ?? '')) expect(given, `ru.${key}`).toContain(name);
      }
    }
  });

  it("says nothing in English on the buyer's Russian pages", () => {
    for (const texts of HOSTED) {
      for (const [key, ru] of Object.entries(texts('ru'))) {
        expect(englishWords(ru.replace(/\{\w+\}/g, ' ')), `ru.${key}: ${ru}`).toEqual([]);
      }
    }
  });

  it('words the test banner once, for every hosted page', () => {
    const banners = TEXT_CATALOG.flatMap((d) =>
      Object.values(d.en).filter((text) => /no real money is charged/i.test(text)),
    );
    expect(banners).toEqual(['Test mode: no real money is charged']);
  });
});
