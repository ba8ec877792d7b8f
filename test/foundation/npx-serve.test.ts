import { afterAll, describe, it } from 'vitest';
import { EMBEDDED_ONLY } from './kopek-process.js';
import { cleanUpServers, stopsEverything } from './stop-through-npm.js';

/** `npx kopek serve` as a user runs it, stopped by a signal to npx (`npm start` is npm-start.test.ts). */

afterAll(cleanUpServers);

describe('stopping a server started through npm', { timeout: 120_000, ...EMBEDDED_ONLY }, () => {
  it('SIGTERM to `npx kopek serve` stops the server', async () => {
    await stopsEverything('npx', ['kopek', 'serve'], 'SIGTERM');
  });
});
