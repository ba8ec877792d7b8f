import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanUp } from '../foundation/kopek-process.js';
import type { BillStore } from './bill-store.js';
import { crashThenRecover, seededStore } from './crash-rounds.js';

/**
 * `kopek bill` on PostgreSQL killed with SIGKILL at random moments and started again: no period is
 * charged twice, none is lost, no money is left without its record. PostgreSQL only, as
 * concurrency.test.ts.
 */

const pgUrl = process.env.DATABASE_URL;
const stores: BillStore[] = [];

afterEach(() => cleanUp());

afterAll(async () => {
  cleanUp();
  for (const s of stores) await s.drop();
});

describe.skipIf(!pgUrl)('kopek bill killed on PostgreSQL (set DATABASE_URL)', () => {
  it('kill -9 at random moments, then restarts: no period charged twice, none lost, nothing unrecorded', async () => {
    const s = await seededStore(stores, 900);
    const stale = await crashThenRecover(s, 900, { rounds: 3, payments: 150, leavesNothingOpen: true });
    // With the gateway in this process a renewal is claimed, paid and recorded in one transaction: a
    // kill leaves no attempt open and no money waiting for its record.
    expect(stale.awaitingRecord).toBe(0);
    expect(stale.open).toBe(0);
  });
});
