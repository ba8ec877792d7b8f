import { defineConfig } from 'vitest/config';

/**
 * The operator's recipe (the Dockerfile's steps, run outside Docker): `npm run test:recipe`, a step
 * of .ci/run of its own, since it installs the dependencies twice.
 */
export default defineConfig({
  test: {
    include: ['test/recipe/**/*.recipe.ts'],
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});
