import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Transformed modules kept on disk (node_modules/.experimental-vitest-cache), keyed by their
    // content and Vite's configuration: a later run (CI's PostgreSQL suite after the embedded one, a
    // developer's next run) imports them instead of transforming them again. Measured: the
    // transforms 4.7 s -> 1.0 s and the imports 13.8 s -> 8.6 s of a run, vitest's main process
    // 15 s -> 11 s of CPU.
    experimental: { fsModuleCache: true },
    // Files in one worker share one store (a PGlite instance costs seconds and hundreds of MB);
    // each test isolates its data by working as its own shop.
    isolate: false,
    maxWorkers: 2,
    // The workers' embedded stores run PGlite's WebAssembly as V8's baseline compiler makes it: the
    // optimizing compiler's background recompilation cost more CPU than it saved in a worker's
    // life (five folders of the suite: 41 and 47 s of CPU with it, 35 and 36 s without).
    execArgv: ['--liftoff-only'],
    // Generous: a loaded 2-core machine is slow, and tests never assert on time.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
