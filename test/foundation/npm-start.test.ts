import { afterAll, describe, it } from 'vitest';
import { EMBEDDED_ONLY } from './kopek-process.js';
import { cleanUpServers, stopsEverything } from './stop-through-npm.js';

/**
 * `npm start` as a user runs it, stopped by a signal to npm. `npx kopek serve` is
 * npx-serve.test.ts: a file of its own, so that the two files' servers start on both workers.
 */

afterAll(cleanUpServers);

// The two start at once: one after the other they would wait for each other's start-up.
describe('stopping a server started through npm', {
  timeout: 120_000,
  concurrent: true,
  ...EMBEDDED_ONLY,
}, () => {
  it('SIGTERM to `npm start` stops the server', async () => {
    await stopsEverything('npm', ['start'], 'SIGTERM');
  });

  it('so does SIGINT', async () => {
    await stopsEverything('npm', ['start'], 'SIGINT');
  });
});
