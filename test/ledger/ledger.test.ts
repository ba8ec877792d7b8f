import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  changeStatus,
  findByTrackingId,
  findTransaction,
  historyOf,
  insertTransaction,
} from '../../src/ledger/repository.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';

let h: Harness;
let shop: TestShop;

beforeAll(async () => {
  h = await harness();
  shop = await newShop(h);
});

const payment = (shopId: number, extra: Record<string, unknown> = {}) => ({
  uid: randomUUID(),
  shop_id: shopId,
  type: 'payment' as const,
  status: 'pending' as const,
  amount: 1999,
  currency: 'EUR',
  test: true,
  ...extra,
});

describe('transaction ledger', () => {
  it('stores a transaction with its json members and reads it back by uid within the shop only', async () => {
    const t = payment(shop.shop.id, { card: { last_4: '0000', brand: 'visa' }, tracking_id: 'order-1' });
    const row = await h.db.tx((tx) => insertTransaction(tx, t, h.clock.now()));
    expect(row).toMatchObject({
      uid: t.uid,
      amount: 1999,
      card: { last_4: '0000', brand: 'visa' },
      details: {},
    });
    expect(await findTransaction(h.db, shop.shop.id, t.uid)).toMatchObject({ uid: t.uid });
    const other = await newShop(h);
    expect(await findTransaction(h.db, other.shop.id, t.uid)).toBeUndefined();
    expect(await findTransaction(h.db, shop.shop.id, 'not-a-uuid')).toBeUndefined();
  });

  it('appends every status change to the history instead of overwriting it', async () => {
    const t = payment(shop.shop.id);
    await h.db.tx((tx) => insertTransaction(tx, t, h.clock.now()));
    const paidAt = h.clock.now();
    const changed = await h.db.tx((tx) =>
      changeStatus(
        tx,
        t.uid,
        { status: 'successful', message: 'Successfully processed', paidAt, details: { a: 1 } },
        paidAt,
      ),
    );
    expect(changed.status).toBe('successful');
    expect(changed.paid_at?.toISOString()).toBe(paidAt.toISOString());
    expect(changed.details).toEqual({ a: 1 });
    expect((await historyOf(h.db, t.uid)).map((e) => e.status)).toEqual(['pending', 'successful']);
  });

  it('keeps each status with its time and message, the first one from the creation', async () => {
    const created = h.clock.now();
    const t = payment(shop.shop.id);
    await insertTransaction(h.db, t, created);
    // Never changed: the history is the status it was created with.
    expect(await historyOf(h.db, t.uid)).toEqual([{ status: 'pending', message: null, at: created }]);
    const later = (ms: number) => new Date(created.getTime() + ms);
    await h.db.tx((tx) => changeStatus(tx, t.uid, { status: 'incomplete', message: null }, later(1000)));
    await h.db.tx((tx) => changeStatus(tx, t.uid, { status: 'failed', message: 'Declined' }, later(2000)));
    expect(await historyOf(h.db, t.uid)).toEqual([
      { status: 'pending', message: null, at: created },
      { status: 'incomplete', message: null, at: later(1000) },
      { status: 'failed', message: 'Declined', at: later(2000) },
    ]);
  });

  it('records the first status once when the history already has it (written at creation before)', async () => {
    const created = h.clock.now();
    const t = payment(shop.shop.id);
    await insertTransaction(h.db, t, created);
    await h.db.query(
      'INSERT INTO transaction_history (uid, status, message, at, shop_id) VALUES ($1, $2, NULL, $3, $4)',
      [t.uid, 'pending', created, shop.shop.id],
    );
    await h.db.tx((tx) => changeStatus(tx, t.uid, { status: 'successful', message: null }, created));
    expect((await historyOf(h.db, t.uid)).map((e) => e.status)).toEqual(['pending', 'successful']);
  });

  it('finds the newest transactions of a tracking id, newest first, as many as asked', async () => {
    const a = payment(shop.shop.id, { tracking_id: 'dup-track' });
    const b = payment(shop.shop.id, { tracking_id: 'dup-track' });
    await h.db.tx(async (tx) => {
      await insertTransaction(tx, a, h.clock.now());
      await insertTransaction(tx, b, h.clock.now());
    });
    const found = await findByTrackingId(h.db, shop.shop.id, 'dup-track', ['payment'], 10);
    expect(found.map((r) => r.uid)).toEqual([b.uid, a.uid]);
    expect(
      (await findByTrackingId(h.db, shop.shop.id, 'dup-track', ['payment'], 1)).map((r) => r.uid),
    ).toEqual([b.uid]);
    expect(await findByTrackingId(h.db, shop.shop.id, 'dup-track', ['refund'], 10)).toEqual([]);
  });
});
