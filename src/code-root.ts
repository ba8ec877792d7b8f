/**
 * The folder Kopek's code runs from: src/ under tsx and the tests, dist/ when built (where
 * `npm run build` writes the bundled program and its chunks, all at the top). The files that ship
 * beside the code (the migrations, the pages' assets, the signing thread) are found from here, the
 * same path whichever file the code that asks was bundled into.
 */
export const CODE_ROOT = new URL('./', import.meta.url);
