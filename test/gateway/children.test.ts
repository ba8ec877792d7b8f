import { beforeAll, describe, expect, it } from 'vitest';
import { withClock } from '../harness.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

let g: GatewayShop;

beforeAll(async () => {
  g = await gatewayShop();
});

const captureOf = (parent_uid: string, amount: unknown = 1999, as = g) =>
  as.send('/transactions/captures', { parent_uid, amount });
const voidOf = (parent_uid: string, extra: Record<string, unknown> = {}, as = g) =>
  as.send('/transactions/voids', { parent_uid, ...extra });
const refundOf = (parent_uid: string, amount: unknown, extra: Record<string, unknown> = {}, as = g) =>
  as.send('/transactions/refunds', { parent_uid, amount, reason: 'Customer request', ...extra });
const authorized = async () => (await g.authorize()).body.transaction.uid as string;
const paid = async (amount = 1999) => (await g.pay({ amount })).body.transaction.uid as string;

const refusal = (message: string) => ({ response: { message: `${message}.`, errors: { base: [message] } } });
const tooMuch = (limit: number, money: string, what: string) => ({
  response: {
    message: `Amount can't be greater than ${limit} (${money}), ${what}.`,
    errors: { amount: [`can't be greater than ${limit} (${money}), ${what}`] },
  },
});

describe('captures', () => {
  it('captures an authorization: a child with parent_uid, paid now', async () => {
    const uid = await authorized();
    const res = await captureOf(uid, 1500);
    expect(res.status).toBe(200);
    const t = res.body.transaction;
    expect(t).toMatchObject({
      type: 'capture',
      status: 'successful',
      message: 'Successfully processed',
      parent_uid: uid,
      amount: 1500,
      currency: 'EUR',
      paid_at: g.h.clock.now().toISOString(),
      credit_card: { last_4: '0000' },
      capture: { status: 'successful', message: 'Capture was approved', amount: 1500 },
    });
    expect(t.customer).toBeUndefined();
  });

  it('refuses to capture more than was authorized', async () => {
    const res = await captureOf(await authorized(), 2000);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(tooMuch(1999, '19.99 EUR', 'the authorized amount'));
  });

  it('captures only once', async () => {
    const uid = await authorized();
    expect((await captureOf(uid, 1000)).status).toBe(200);
    const again = await captureOf(uid, 500);
    expect(again.status).toBe(422);
    expect(again.body).toEqual(refusal("Transaction can't be captured: it has already been captured"));
  });

  it('captures only a successful authorization', async () => {
    const payment = await captureOf(await paid());
    expect(payment.body).toEqual(
      refusal("Transaction can't be captured: only an authorization can be captured"),
    );
    const declined = (await g.authorize({ credit_card: card('4005550000000019') })).body.transaction.uid;
    expect((await captureOf(declined)).body).toEqual(
      refusal("Transaction can't be captured: the authorization was not successful"),
    );
  });

  it('requires parent_uid and a positive amount', async () => {
    const res = await g.send('/transactions/captures', { amount: 0 });
    expect(res.body).toEqual({
      response: {
        message: "Parent uid can't be blank. Amount must be greater than 0.",
        errors: { parent_uid: ["can't be blank"], amount: ['must be greater than 0'] },
      },
    });
  });
});

describe('voids', () => {
  it('voids an uncaptured authorization, for its whole amount by default', async () => {
    const uid = await authorized();
    const t = (await voidOf(uid)).body.transaction;
    expect(t).toMatchObject({
      type: 'void',
      status: 'successful',
      parent_uid: uid,
      amount: 1999,
      paid_at: null,
    });
    expect(t.void).toMatchObject({ message: 'Void was approved' });
  });

  it('voids only once, and then nothing can be captured', async () => {
    const uid = await authorized();
    expect((await voidOf(uid, { amount: 1999 })).status).toBe(200);
    expect((await voidOf(uid)).body).toEqual(
      refusal("Transaction can't be voided: it has already been voided"),
    );
    expect((await captureOf(uid)).body).toEqual(refusal("Transaction can't be captured: it has been voided"));
  });

  it('does not void a captured authorization', async () => {
    const uid = await authorized();
    await captureOf(uid);
    expect((await voidOf(uid)).body).toEqual(
      refusal("Transaction can't be voided: it has been captured; refund the capture instead"),
    );
  });

  it('refuses a void amount beyond the authorization, and a void of a payment', async () => {
    expect((await voidOf(await authorized(), { amount: 5000 })).body).toEqual(
      tooMuch(1999, '19.99 EUR', 'the authorized amount'),
    );
    expect((await voidOf(await paid())).body).toEqual(
      refusal("Transaction can't be voided: only an authorization can be voided"),
    );
  });
});

describe('refunds', () => {
  it("requires a reason, in the platform's sentence", async () => {
    const res = await g.send('/transactions/refunds', { parent_uid: await paid(), amount: 100 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      response: { message: "Reason can't be blank.", errors: { reason: ["can't be blank"] } },
    });
  });

  it('refunds a payment in parts up to what was paid, and no further', async () => {
    const uid = await paid(1000);
    const first = await refundOf(uid, 600);
    expect(first.body.transaction).toMatchObject({
      type: 'refund',
      status: 'successful',
      parent_uid: uid,
      amount: 600,
      reason: 'Customer request',
      refund: { status: 'successful', message: 'Refund was approved' },
    });
    expect((await refundOf(uid, 500)).body).toEqual(tooMuch(400, '4.00 EUR', 'the amount not yet refunded'));
    expect((await refundOf(uid, 400)).status).toBe(200);
    expect((await refundOf(uid, 1)).body).toEqual(
      refusal("Transaction can't be refunded: it has been refunded in full"),
    );
  });

  it('refuses a refund beyond the payment at once', async () => {
    expect((await refundOf(await paid(1000), 1001)).body).toEqual(
      tooMuch(1000, '10.00 EUR', 'the amount not yet refunded'),
    );
  });

  it('refunds a capture up to the captured amount; not the authorization itself', async () => {
    const auth = await authorized();
    const cap = (await captureOf(auth, 800)).body.transaction.uid;
    expect((await refundOf(auth, 100)).body).toEqual(
      refusal("Transaction can't be refunded: only a successful payment or capture can be refunded"),
    );
    expect((await refundOf(cap, 801)).body).toEqual(tooMuch(800, '8.00 EUR', 'the amount not yet refunded'));
    expect((await refundOf(cap, 800)).body.transaction.status).toBe('successful');
  });

  it('never refunds more than was paid, even when refunds arrive at once', async () => {
    const uid = await paid(1000);
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map(() => refundOf(uid, 400, { duplicate_check: false })),
    );
    const ok = results.filter((r) => r.status === 200 && r.body.transaction.status === 'successful');
    expect(ok).toHaveLength(2);
    expect(results.filter((r) => r.status === 422)).toHaveLength(3);
    const [sum] = await g.h.db.query<{ total: number }>(
      "SELECT COALESCE(sum(amount), 0)::int AS total FROM transactions WHERE parent_uid = $1 AND type = 'refund' AND status = 'successful'",
      [uid],
    );
    expect(sum?.total).toBe(800);
  });

  it('declines the same refund amount again within 30 seconds, unless told not to check', async () => {
    const uid = await paid(1000);
    const first = (await refundOf(uid, 100)).body.transaction;
    const dup = await refundOf(uid, 100);
    expect(dup.status).toBe(200);
    expect(dup.body.transaction).toMatchObject({
      status: 'failed',
      message: expect.stringContaining(`Duplicate refund`),
    });
    expect(dup.body.transaction.message).toContain(first.uid);
    expect((await refundOf(uid, 100, { duplicate_check: false })).body.transaction.status).toBe('successful');
    await withClock(g.h, 31_000, async () => {
      expect((await refundOf(uid, 100)).body.transaction.status).toBe('successful');
    });
  });
});

describe('parents', () => {
  const notFound = { response: { message: 'Record not found', errors: { base: ['Record not found'] } } };

  it("answers 404 for another shop's parent, an unknown one and a malformed one", async () => {
    const other = await gatewayShop();
    const theirs = (await other.pay()).body.transaction.uid;
    const theirAuth = (await other.authorize()).body.transaction.uid;
    for (const res of [
      await refundOf(theirs, 100),
      await captureOf(theirAuth),
      await voidOf(theirAuth),
      await refundOf('00000000-0000-4000-8000-000000000000', 100),
      await refundOf('1-310b0da80b', 100),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
    }
    expect((await captureOf(theirAuth, 1999, other)).status).toBe(200);
  });
});
