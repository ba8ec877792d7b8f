import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { KillingProxy } from '../foundation/killing-proxy.js';
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
    // Fewer and shorter rounds than in process: a charge over HTTP costs about three times as much.
    // Three kills at random moments, and a fourth by the proxy the moment the gateway has answered
    // a payment, so that at least one payment waits for its record whatever the random ones hit.
    // Each killed run claims a batch of 100, and the restart must still find subscriptions of its
    // own to bill.
    const N = 500;
    const s = await seededStore(stores, N);
    const gateway = await startGateway(s);
    const proxy = new KillingProxy(new URL(gateway.env.GATEWAY_URL as string));
    try {
      const env = { ...gateway.env, GATEWAY_URL: await proxy.listen() };
      const stale = await crashThenRecover(s, N, { rounds: 3, payments: 60, env, proxy });
      expect(stale.awaitingRecord).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });
});
