import { beforeAll, describe, expect, it } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import { fixedClock } from '../../src/clock.js';
import type { Services } from '../../src/context.js';
import { signedIn } from '../cabinet/session.js';
import { goodCard, openPage, postForm } from '../checkout/forms.js';
import { client, type Harness, harness, newShop } from '../harness.js';
import { card, cardBody, customer, monthly } from './helpers.js';

/**
 * A free trial on a shop with 3-D Secure verifies the card as any first charge would, through 3-D
 * Secure: an authorization of one minor unit (the gateway takes no authorization of 0) under the
 * trial's tracking id `sbs_…-0`, released at once by a void. The trial starts when the verification
 * succeeds; a failed verification fails and cancels the subscription as a failed first payment does.
 * Nothing is paid: the first payment is still taken when the trial ends. A shop without 3-D Secure
 * keeps the free trial as it was: no transaction at all until the trial ends.
 */

let h: Harness;
let services: Services;

beforeAll(async () => {
  h = await harness();
  services = { db: h.db, clock: h.clock, config: h.config, masterKey: h.masterKey, log: h.app.log };
});

const DAY = 86_400_000;
const freeTrial = () => monthly({ trial: { amount: 0, interval: 14, interval_unit: 'day' } });

interface Tx {
  uid: string;
  type: string;
  status: string;
  amount: number;
  parent_uid: string | null;
}

/** The gateway's transactions of a subscription's trial: under `sbs_…-0`, and their children. */
async function trialTransactions(shopId: number, id: string): Promise<Tx[]> {
  return h.db.query<Tx>(
    `SELECT t.uid, t.type, t.status, t.amount::int AS amount, t.parent_uid FROM transactions t
     WHERE t.shop_id = $1 AND (t.tracking_id = $2 OR t.parent_uid IN (
       SELECT uid FROM transactions WHERE shop_id = $1 AND tracking_id = $2))
     ORDER BY t.seq`,
    [shopId, `${id}-0`],
  );
}

async function eventsOf(id: string): Promise<string[]> {
  const rows = await h.db.query<{ event: string }>(
    "SELECT event FROM events WHERE resource_type = 'subscription' AND resource_id = $1 ORDER BY id",
    [id],
  );
  return rows.map((r) => r.event);
}

async function chargesOf(id: string) {
  return h.db.query(
    `SELECT period, attempt, status, amount::int AS amount FROM subscription_charges
     WHERE subscription_id = $1 ORDER BY period, attempt`,
    [id],
  );
}

/** One authorization of one minor unit, successful, and one void of it: verified and released. */
function expectVerifiedAndReleased(txs: Tx[]): void {
  const auth = txs.find((t) => t.type === 'authorization');
  expect(txs).toEqual([
    { uid: expect.any(String), type: 'authorization', status: 'successful', amount: 1, parent_uid: null },
    { uid: expect.any(String), type: 'void', status: 'successful', amount: 1, parent_uid: auth?.uid },
  ]);
}

describe('a free trial on a shop with 3-D Secure verifies the card', () => {
  it('a card without a challenge: verified, released, in trial; the first payment when the trial ends', async () => {
    const shop = await newShop(h, { threeDs: true });
    const api = client(h, shop);
    const now = h.clock.now();
    const res = await api.post('/subscriptions', cardBody({ plan: freeTrial() }));
    expect(res.status, res.text).toBe(201);
    const trialEnd = new Date(now.getTime() + 14 * DAY);
    expect(res.body).toMatchObject({
      state: 'trial',
      renew_at: trialEnd.toISOString(),
      active_to: trialEnd.toISOString(),
      paid_billing_cycles: 0,
      last_transaction: { status: 'successful' },
    });
    const txs = await trialTransactions(shop.shop.id, res.body.id);
    expectVerifiedAndReleased(txs);
    expect(res.body.last_transaction.uid).toBe(txs[0]?.uid);
    expect(await chargesOf(res.body.id)).toEqual([
      { period: 0, attempt: 1, status: 'successful', amount: 1 },
    ]);
    expect(await eventsOf(res.body.id)).toEqual(['created.subscription', 'trial_started.subscription']);

    // The trial ends: its first payment is the plan's price, taken from the verified card.
    // (On a clock of its own: the worker's clock is shared by the files it runs.)
    const summary = await billDue({ ...services, clock: fixedClock(trialEnd) }, { shopId: shop.shop.id });
    expect(summary).toMatchObject({ charged: 1, successful: 1 });
    const after = (await api.get(`/subscriptions/${res.body.id}`)).body;
    expect(after).toMatchObject({ state: 'active', paid_billing_cycles: 1 });
    const paid = await h.db.query<{ amount: number; status: string }>(
      `SELECT amount::int AS amount, status FROM transactions
       WHERE shop_id = $1 AND type = 'payment' AND tracking_id LIKE $2`,
      [shop.shop.id, `${res.body.id}-%`],
    );
    expect(paid).toEqual([{ amount: 1999, status: 'successful' }]);
    expect((await eventsOf(res.body.id)).slice(2)).toEqual([
      'trial_ended.subscription',
      'activated.subscription',
    ]);

    // The cabinet names the trial's attempt a verification, not a charge.
    const cabinet = await signedIn(h, shop);
    const page = await cabinet.get(`/cabinet/subscriptions/${res.body.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Card verification (released at once), attempt 1');
    expect(page.body).not.toContain('Trial charge');
    expect(page.body).toContain('Charge of period 1, attempt 1');
  });

  it('a card with a challenge: the subscription waits for the cardholder, whose pass starts the trial', async () => {
    const shop = await newShop(h, { threeDs: true });
    const api = client(h, shop);
    const res = await api.post(
      '/subscriptions',
      cardBody({ plan: freeTrial(), card: card('4012000000001097') }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      state: 'redirecting',
      last_transaction: { status: 'incomplete', redirect_url: expect.any(String) },
    });
    const uid = res.body.last_transaction.uid as string;
    expect(await trialTransactions(shop.shop.id, res.body.id)).toEqual([
      { uid, type: 'authorization', status: 'incomplete', amount: 1, parent_uid: null },
    ]);

    const passed = await h.app.inject({
      method: 'POST',
      url: `/process/${uid}/return`,
      headers: { authorization: shop.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ outcome: 'passed' }),
    });
    expect(passed.statusCode).toBe(200);
    const read = (await api.get(`/subscriptions/${res.body.id}`)).body;
    expect(read).toMatchObject({ state: 'trial', paid_billing_cycles: 0, last_transaction: { uid } });
    expectVerifiedAndReleased(await trialTransactions(shop.shop.id, res.body.id));
    expect(await chargesOf(res.body.id)).toEqual([
      { period: 0, attempt: 1, status: 'successful', amount: 1 },
    ]);
    expect(await eventsOf(res.body.id)).toEqual(['created.subscription', 'trial_started.subscription']);
  });

  it.each([
    ['fails 3-D Secure', '4012000000001022'],
    ['is declined', '4005550000000019'],
  ])('a card that %s: failed and cancelled, nothing held', async (_what, number) => {
    const shop = await newShop(h, { threeDs: true });
    const api = client(h, shop);
    const res = await api.post('/subscriptions', cardBody({ plan: freeTrial(), card: card(number) }));
    expect(res.status, res.text).toBe(201);
    if (res.body.state === 'redirecting') {
      // The 3-D Secure step: this card fails it whatever the cardholder does.
      const finished = await h.app.inject({
        method: 'POST',
        url: `/process/${res.body.last_transaction.uid}/return`,
        headers: { authorization: shop.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ outcome: 'passed' }),
      });
      expect(finished.statusCode).toBe(200);
    }
    const read = (await api.get(`/subscriptions/${res.body.id}`)).body;
    expect(read).toMatchObject({
      state: 'failed',
      renew_at: null,
      cancel_reason: expect.stringMatching(/^Card verification failed: /),
    });
    const txs = await trialTransactions(shop.shop.id, res.body.id);
    expect(txs).toEqual([
      { uid: expect.any(String), type: 'authorization', status: 'failed', amount: 1, parent_uid: null },
    ]);
    expect(await chargesOf(res.body.id)).toEqual([{ period: 0, attempt: 1, status: 'failed', amount: 1 }]);
    expect(await eventsOf(res.body.id)).toEqual([
      'created.subscription',
      'failed.subscription',
      'canceled.subscription',
    ]);
  });

  it('the hosted payment page of a redirect subscription verifies the card too', async () => {
    const shop = await newShop(h, { threeDs: true });
    const api = client(h, shop);
    const created = await api.post('/subscriptions', { plan: freeTrial(), customer: customer() });
    expect(created.body.state).toBe('redirecting');
    const page = await openPage(h, created.body.token);
    expect(page.status).toBe(200);
    expect((await postForm(h, page, created.body.token, goodCard('4200000000000000'))).status).toBe(303);
    const read = (await api.get(`/subscriptions/${created.body.id}`)).body;
    expect(read).toMatchObject({ state: 'trial', paid_billing_cycles: 0 });
    expectVerifiedAndReleased(await trialTransactions(shop.shop.id, created.body.id));
  });

  it('a retried keyed create verifies once', async () => {
    const shop = await newShop(h, { threeDs: true });
    const api = client(h, shop);
    const body = cardBody({ plan: freeTrial() });
    const key = { 'idempotency-key': `verify-${shop.shop.id}` };
    const first = await api.post('/subscriptions', body, key);
    const again = await api.post('/subscriptions', body, key);
    expect(first.status).toBe(201);
    expect(again.text).toBe(first.text);
    expectVerifiedAndReleased(await trialTransactions(shop.shop.id, first.body.id));
  });

  it('without 3-D Secure a free trial makes no transaction until it ends', async () => {
    const shop = await newShop(h, { threeDs: false });
    const api = client(h, shop);
    const res = await api.post('/subscriptions', cardBody({ plan: freeTrial() }));
    expect(res.body).toMatchObject({ state: 'trial', last_transaction: null });
    expect(await trialTransactions(shop.shop.id, res.body.id)).toEqual([]);
    expect(await chargesOf(res.body.id)).toEqual([]);
  });
});
