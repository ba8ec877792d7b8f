import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import { newId } from '../../src/ids.js';
import { insertTransaction } from '../../src/ledger/repository.js';
import { insertSubscription } from '../../src/subscriptions/state.js';
import { client, type Harness, harness, newShop, type TestShop } from '../harness.js';
import { noExtras } from '../subscriptions/helpers.js';

/** Locks the row at once or fails: true when no other transaction holds a lock on it. */
async function lockableNow(db: Db, table: string, id: string | number): Promise<boolean> {
  try {
    await db.tx((tx) => tx.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE NOWAIT`, [id]));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') return false;
    throw err;
  }
}

// Two transactions at once need two connections: PostgreSQL only (PGlite has one).
describe.runIf(process.env.DATABASE_URL)('writes under a shop, plan and customer on PostgreSQL', () => {
  let h: Harness;
  let shop: TestShop;
  let planId: string;
  let customerId: string;

  beforeAll(async () => {
    h = await harness();
    shop = await newShop(h);
    const api = client(h, shop);
    const plan = await api.post('/plans', {
      title: 'Monthly',
      currency: 'USD',
      plan: { amount: 500, interval: 1, interval_unit: 'month' },
    });
    expect(plan.status).toBe(201);
    planId = plan.body.id;
    const customer = await api.post('/customers', { email: 'lock@example.com', ip: '127.0.0.1' });
    expect(customer.status).toBe(201);
    customerId = customer.body.id;
  });

  it('lock none of those rows while the writing transaction is open', async () => {
    const now = h.clock.now();
    const shopId = shop.shop.id;
    let seen: Record<string, boolean> = {};
    const rollback = new Error('rolled back on purpose');
    await expect(
      h.db.tx(async (tx) => {
        await tx.query(
          'INSERT INTO customers (id, shop_id, email, ip, created_at) VALUES ($1, $2, $3, $4, $5)',
          [newId('cst'), shopId, 'second@example.com', '127.0.0.1', now],
        );
        await insertTransaction(
          tx,
          {
            uid: randomUUID(),
            shop_id: shopId,
            type: 'payment',
            status: 'successful',
            amount: 500,
            currency: 'USD',
            test: true,
          },
          now,
        );
        await insertSubscription(
          tx,
          {
            id: newId('sbs'),
            shop_id: shopId,
            plan_id: planId,
            customer_id: customerId,
            card_token: null,
            card: null,
            state: 'redirecting',
            ...noExtras,
            billing_anchor: now,
            billing_day: now.getUTCDate(),
            time_zone: 'UTC',
            renew_at: null,
            active_to: null,
          },
          now,
        );
        // Meanwhile, on other connections: a concurrent writer under the same parents would need
        // exactly these rows, and they must not be held.
        seen = {
          shop: await lockableNow(h.db, 'shops', shopId),
          plan: await lockableNow(h.db, 'plans', planId),
          customer: await lockableNow(h.db, 'customers', customerId),
        };
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(seen).toEqual({ shop: true, plan: true, customer: true });
  });
});
