import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Files in one worker share one store (a PGlite instance costs seconds and hundreds of MB);
    // each test isolates its data by working as its own shop.
    isolate: false,
    maxWorkers: 2,
    // Generous: a loaded 2-core machine is slow, and tests never assert on time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
