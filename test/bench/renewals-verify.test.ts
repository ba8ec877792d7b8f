import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { verifyRenewals } from '../../bench/renewals.js';
import { seedRenewals } from '../../bench/renewals-seed.js';
import { runKopek } from '../cli/run-cli.js';
import { freshPostgresUrl } from '../fresh-store.js';

/**
 * The renewal benchmark reports "each subscription renewed exactly once" from one SQL check. Here it
 * runs on a small seeded store: it passes after `kopek bill`, and it names a double charge and a
 * missing renewal when the store has one, so a benchmark run cannot pass them by.
 */

const COUNT = 12;

async function sql(url: string, text: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe.runIf(process.env.DATABASE_URL)('the renewal benchmark’s verification', () => {
  it('passes a store renewed once by kopek bill, and names a double charge and a missed renewal', async () => {
    const url = await freshPostgresUrl();
    const seeded = await seedRenewals(url, COUNT);
    const env = {
      DATABASE_URL: url,
      KOPEK_MASTER_KEY: seeded.masterKeyHex,
      PUBLIC_URL: 'http://kopek.test',
      LOG_LEVEL: 'silent',
    };
    const bill = await runKopek(undefined, env, 'bill');
    expect(bill.code, bill.output).toBe(0);
    expect(await verifyRenewals(url, seeded)).toMatchObject({ ok: true, problems: [] });

    // One subscription charged twice for its second period: a copy of its payment, another uid.
    const [payment] = await sql(
      url,
      "SELECT uid, tracking_id FROM transactions WHERE type = 'payment' AND tracking_id LIKE '%-2' LIMIT 1",
    );
    await sql(
      url,
      `INSERT INTO transactions (uid, shop_id, type, status, message, amount, currency, tracking_id, test,
         card_token, card, details, paid_at, created_at, updated_at)
       SELECT $2, shop_id, type, status, message, amount, currency, tracking_id, test,
         card_token, card, details, paid_at, created_at, updated_at
       FROM transactions WHERE uid = $1`,
      [payment?.uid, randomUUID()],
    );
    const doubled = await verifyRenewals(url, seeded);
    expect(doubled.ok).toBe(false);
    expect(doubled.problems).toEqual(
      expect.arrayContaining([
        `payments_in_ledger: ${2 * COUNT + 1}, expected ${2 * COUNT}`,
        'without_exactly_one_period_2_payment: 1, expected 0',
      ]),
    );

    // Another subscription whose renewal never happened: its period-2 charge record gone.
    await sql(
      url,
      `DELETE FROM subscription_charges WHERE period = 2 AND subscription_id =
         (SELECT subscription_id FROM subscription_charges WHERE period = 2 AND subscription_id <> $1 LIMIT 1)`,
      [String(payment?.tracking_id).replace(/-2$/, '')],
    );
    const missed = await verifyRenewals(url, seeded);
    expect(missed.problems).toEqual(
      expect.arrayContaining([
        `period_2_charge_records: ${COUNT - 1}, expected ${COUNT}`,
        'without_exactly_one_successful_period_2: 1, expected 0',
      ]),
    );
  });
});
