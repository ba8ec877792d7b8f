import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanUp } from '../foundation/kopek-process.js';
import { type BillStore, startGateway } from './bill-store.js';
import { crashThenRecover, seededStore } from './crash-rounds.js';

/**
 * `kopek bill` charging through another process's gateway over HTTP, killed with SIGKILL at random
 * moments: a payment the gateway made but the killed run never recorded is found by a query, not
 * charged again. PostgreSQL only, as concurrency.test.ts.
 */

const pgUrl = process.env.DATABASE_URL;
const stores: BillStore[] = [];

afterEach(() => cleanUp());

afterAll(async () => {
  cleanUp();
  for (const s of stores) await s.drop();
});

describe.skipIf(!pgUrl)('kopek bill over an HTTP gateway on PostgreSQL (set DATABASE_URL)', () => {
  it('over an HTTP gateway, a kill between the payment and its record is resolved by query, not charged again', async () => {
    // Fewer and shorter rounds: a charge over HTTP costs about three times one in process, and
    // nearly every kill falls while some payment waits for its record (the gateway finishes the
    // request the killed process sent).
    // Each killed run claims a batch of 100 (up to four kills), and the restart must still find
    // subscriptions of its own to bill.
    const N = 500;
    const s = await seededStore(stores, N);
    const gateway = await startGateway(s);
    const stale = await crashThenRecover(s, N, {
      rounds: 3,
      payments: 60,
      env: gateway.env,
      untilAwaitingRecord: 4,
    });
    expect(stale.awaitingRecord).toBeGreaterThan(0);
  });
});
