import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanUp } from '../foundation/kopek-process.js';
import {
  type BillRun,
  type BillStore,
  holdingProxy,
  ledgerReport,
  startBill,
  startGateway,
} from './bill-store.js';
import { CLEAN, clean, seededStore } from './crash-rounds.js';

/**
 * The billing engine as operators run it: real `kopek bill` processes on PostgreSQL, several at once,
 * over thousands of due subscriptions. Afterwards the store itself is asked whether any period was
 * charged twice, money taken without a record, or a due period left unbilled. Runs killed mid-way:
 * crash.test.ts and crash-http.test.ts. PostgreSQL only: the embedded store is one process's alone,
 * so there is no concurrency to test.
 */

const pgUrl = process.env.DATABASE_URL;
const stores: BillStore[] = [];

afterEach(() => cleanUp());

afterAll(async () => {
  cleanUp();
  for (const s of stores) await s.drop();
});

describe.skipIf(!pgUrl)('kopek bill on PostgreSQL (set DATABASE_URL; skipped on the embedded store)', () => {
  it('three processes at once on 10,000 due subscriptions charge each period exactly once', async () => {
    const N = 10_000;
    const s = await seededStore(stores, N);

    const started = performance.now();
    const runs: BillRun[] = [startBill(s), startBill(s), startBill(s)];
    const summaries = await Promise.all(runs.map((r) => r.summary()));
    console.log(
      `3 × kopek bill: ${Math.round(performance.now() - started)} ms; charged ${summaries.map((x) => x.charged).join(' + ')}`,
    );

    const report = await ledgerReport(s, 2);
    expect(report.subscriptions).toBe(N);
    expect(clean(report)).toEqual(CLEAN);
    expect(report.awaitingRecord).toBe(0);
    expect(report.notRenewed).toEqual([]);
    expect(report.payments).toBe(N);
    expect(report.open).toBe(0);
    expect(report.due).toBe(0);
    // What the processes said they did adds up to what the store holds.
    const total = (k: keyof (typeof summaries)[number]) => summaries.reduce((n, x) => n + x[k], 0);
    expect(total('successful')).toBe(N);
    expect(total('charged')).toBe(N);
    expect(total('failed') + total('errors') + total('unknown') + total('resolved')).toBe(0);
    // The runs did overlap: otherwise this test proved nothing about concurrency.
    expect(summaries.filter((x) => x.charged > 0).length).toBeGreaterThanOrEqual(2);
  });

  it('a run whose batch outlives its lease charges nothing another run has taken over', async () => {
    // One batch: the first run claims every subscription at once, under one lease. Few: the held
    // payment times out after 10 s, and the other run must have charged the rest before then, even
    // on a loaded machine.
    const N = 20;
    const s = await seededStore(stores, N);
    const gateway = await startGateway(s);
    const proxy = await holdingProxy(gateway.env.GATEWAY_URL as string, 3);
    try {
      // The first run reaches its gateway through a proxy that holds its fourth payment: a run
      // slowed down in the middle of its batch (a gateway that takes seconds to answer, say).
      const slow = startBill(s, { ...gateway.env, GATEWAY_URL: proxy.url });
      await Promise.race([
        proxy.holding,
        slow.exited.then(() => {
          throw new Error(`kopek bill ended before its payment was held:\n${slow.output()}`);
        }),
      ]);
      // Meanwhile the lease it took when it claimed the batch runs out (what a slow batch does in
      // five minutes; moved here, as in the crash tests). Subscriptions leased later than the claim
      // keep their lease.
      await s.db.query(
        `UPDATE subscriptions SET renew_at = now() - interval '1 second'
         WHERE renew_at = (SELECT min(s.renew_at) FROM subscriptions s
           JOIN subscription_charges c ON c.subscription_id = s.id
           WHERE c.period = 2 AND c.status = 'pending')`,
      );
      // Another run (another instance's billing loop) takes over whatever is due again...
      const other = await startBill(s, gateway.env).summary();
      // ...and then the slow run carries on with its batch.
      proxy.release();
      const first = await slow.summary();
      console.log(`slow run: ${JSON.stringify(first)}\nother run: ${JSON.stringify(other)}`);

      const report = await ledgerReport(s, 2);
      expect(clean(report)).toEqual(CLEAN);
      expect(report.notRenewed).toEqual([]);
      expect(report.payments).toBe(N);
      expect(report.open).toBe(0);
      expect(report.due).toBe(0);
      // The slow run charged what it had sent, the held payment included (its lease was renewed as
      // it went out); the other run resolved and charged the rest; neither charged the other's.
      expect(first).toMatchObject({ charged: 4, successful: 4 });
      expect(other).toMatchObject({ resolved: N - 4, charged: N - 4, successful: N - 4 });
    } finally {
      proxy.release();
      await proxy.close();
    }
  });
});
