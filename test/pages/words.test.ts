import { describe, expect, it } from 'vitest';
import { englishWords } from './words.js';

/** The English-word finder the Russian page walks use: ids are not words, whatever characters they drew. */
describe('englishWords', () => {
  it('passes over Kopek ids, also those without a digit', () => {
    expect(englishWords('Клиент cst_ubANsjfUZLjsHrfIdmMiVkYF, план pln_ijXkmimxbwYDksjztuiAkbPS.')).toEqual(
      [],
    );
  });

  it('still finds English words beside them', () => {
    expect(englishWords('Клиент cst_ubANsjfUZLjsHrfIdmMiVkYF was created')).toEqual(['was', 'created']);
  });
});
