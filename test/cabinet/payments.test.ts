import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { insertTransaction } from '../../src/ledger/repository.js';
import { charge } from '../gateway/helpers.js';
import { client, harness, newShop, withClock } from '../harness.js';
import { signedIn } from './session.js';

/** The cabinet's payments: list, filters, paging, a transaction's page, and capture, void, refund. */

async function shopWithPayments() {
  const h = await harness();
  const shop = await newShop(h, { name: 'Payments shop' });
  const api = client(h, shop);
  const pay = async (extra: Record<string, unknown> = {}) => {
    const res = await api.post('/transactions/payments', { request: charge(extra) });
    expect(res.status).toBe(200);
    return res.body.transaction as { uid: string; status: string; tracking_id: string };
  };
  const authorize = async (extra: Record<string, unknown> = {}) => {
    const res = await api.post('/transactions/authorizations', { request: charge(extra) });
    expect(res.status).toBe(200);
    return res.body.transaction as { uid: string; status: string };
  };
  const cab = await signedIn(h, shop);
  return { h, shop, api, pay, authorize, cab };
}

/** The UTC day `days` after `at`, as YYYY-MM-DD. */
const dayOf = (at: Date, days: number) =>
  new Date(at.getTime() + days * 86_400_000).toISOString().slice(0, 10);

const uidsIn = (html: string) =>
  [...html.matchAll(/href="\/cabinet\/payments\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

/** Walks the two steps of an action as a browser would: the form, its review, the confirmation post. */
async function act(
  cab: Awaited<ReturnType<typeof signedIn>>,
  uid: string,
  action: string,
  form: Record<string, string> = {},
) {
  const review = await cab.get(
    `/cabinet/payments/${uid}/${action}?${new URLSearchParams({ review: '1', ...form })}`,
  );
  expect(review.status).toBe(200);
  const nonce = /name="nonce" value="([^"]+)"/.exec(review.body)?.[1] ?? '';
  expect(nonce).not.toBe('');
  return { review, nonce, post: () => cab.post(`/cabinet/payments/${uid}/${action}`, { nonce, ...form }) };
}

describe('cabinet payments list', () => {
  it("lists the shop's own transactions, newest first, with status, amount and card", async () => {
    const { h, pay, cab } = await shopWithPayments();
    const first = await pay({ description: 'First order' });
    const second = await pay({
      description: 'Second <script>alert(1)</script>',
      amount: 500,
      currency: 'JPY',
    });
    const other = await shopWithPayments();
    const foreign = await other.pay();
    const page = await cab.get('/cabinet/payments');
    expect(page.status).toBe(200);
    const uids = uidsIn(page.body);
    expect(uids.indexOf(second.uid)).toBeLessThan(uids.indexOf(first.uid));
    expect(uids).not.toContain(foreign.uid);
    expect(page.body).toContain('¥500');
    expect(page.body).toContain('€19.99');
    expect(page.body).toContain('•••• 0000');
    expect(page.body).not.toContain('<script>alert(1)');
    expect(page.body).toContain('Second &lt;script>alert(1)&lt;/script>');
    expect(h).toBeDefined();
  });

  it('keeps every payment of a day whose rows were numbered out of their creation order or at one instant', async () => {
    const h = await harness();
    const shop = await newShop(h, { name: 'Swapped payments' });
    const cab = await signedIn(h, shop);
    const make = async (at: string) => {
      const uid = randomUUID();
      const t = {
        uid,
        shop_id: shop.shop.id,
        type: 'payment',
        status: 'successful',
        amount: 100,
        currency: 'EUR',
        test: true,
      };
      await insertTransaction(h.db, t as Parameters<typeof insertTransaction>[1], new Date(at));
      return uid;
    };
    // Numbered in this order: the second was created 5 s before the first (two writers, one slower
    // to commit), the last two at one instant.
    const late = await make('2026-02-10T12:00:05Z');
    const early = await make('2026-02-10T12:00:00Z');
    const tiedA = await make('2026-02-11T09:00:00Z');
    const tiedB = await make('2026-02-11T09:00:00Z');
    const day = (from: string, to: string) =>
      cab.get(`/cabinet/payments?from=${from}&to=${to}`).then((r) => uidsIn(r.body).sort());
    expect(await day('2026-02-10', '2026-02-10')).toEqual([late, early].sort());
    expect(await day('2026-02-11', '2026-02-11')).toEqual([tiedA, tiedB].sort());
    expect(await day('2026-02-10', '2026-02-11')).toEqual([late, early, tiedA, tiedB].sort());
  });

  it('filters by status, type, uid, tracking id and dates', async () => {
    const { h, pay, authorize, cab } = await shopWithPayments();
    const ok = await pay();
    const declined = await pay({ credit_card: { ...charge().credit_card, number: '4005550000000019' } });
    expect(declined.status).toBe('failed');
    const auth = await authorize();
    const failed = uidsIn((await cab.get('/cabinet/payments?status=failed')).body);
    expect(failed).toEqual([declined.uid]);
    const auths = uidsIn((await cab.get('/cabinet/payments?type=authorization')).body);
    expect(auths).toEqual([auth.uid]);
    const payments = uidsIn((await cab.get('/cabinet/payments?type=payment&status=successful')).body);
    expect(payments).toEqual([ok.uid]);
    expect(uidsIn((await cab.get(`/cabinet/payments?uid=${ok.uid.toUpperCase()}`)).body)).toEqual([ok.uid]);
    const tracked = await cab.get(`/cabinet/payments?tracking_id=${encodeURIComponent(ok.tracking_id)}`);
    expect(uidsIn(tracked.body)).toEqual([ok.uid]);
    // Days in the shop's zone (UTC), from the worker's shared clock wherever earlier files left it.
    const today = dayOf(h.clock.now(), 0);
    expect(uidsIn((await cab.get(`/cabinet/payments?from=${today}&to=${today}`)).body)).toHaveLength(3);
    expect(uidsIn((await cab.get(`/cabinet/payments?from=${dayOf(h.clock.now(), 1)}`)).body)).toHaveLength(0);
    expect(uidsIn((await cab.get(`/cabinet/payments?to=${dayOf(h.clock.now(), -1)}`)).body)).toHaveLength(0);
    // Malformed filters are shown on their fields, never a failure.
    const bad = await cab.get('/cabinet/payments?uid=nope&from=2026-13-45&status=weird&after=x');
    expect(bad.status).toBe(200);
    expect(bad.body).toContain('A UID looks like');
    expect(bad.body).toContain('Enter a date as YYYY-MM-DD.');
  });

  it('pages by keyset, keeping the filters', async () => {
    const { h, shop, cab } = await shopWithPayments();
    const now = h.clock.now();
    const made: string[] = [];
    for (let i = 0; i < 53; i++) {
      const uid = randomUUID();
      made.push(uid);
      await insertTransaction(
        h.db,
        {
          uid,
          shop_id: shop.shop.id,
          type: 'refund',
          status: 'successful',
          amount: 100 + i,
          currency: 'EUR',
          test: true,
        },
        now,
      );
    }
    const first = await cab.get('/cabinet/payments?type=refund');
    const firstUids = uidsIn(first.body);
    expect(firstUids).toHaveLength(50);
    expect(firstUids[0]).toBe(made.at(-1));
    const next = /href="([^"]+)" rel="next"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&') ?? '';
    expect(next).toContain('type=refund');
    const second = await cab.get(next);
    expect(uidsIn(second.body)).toEqual(made.slice(0, 3).reverse());
    expect(second.body).not.toContain('rel="next"');
  });
});

describe('cabinet payments by date', () => {
  it("finds a day's payments among older and newer ones, in the shop's time zone", async () => {
    const { h, pay, cab } = await shopWithPayments();
    const day = 24 * 3600 * 1000;
    const before = await withClock(h, 2 * day, () => pay());
    const during = await withClock(h, 3 * day, () => pay());
    const after = await withClock(h, 4 * day, () => pay());
    const now = h.clock.now();
    const third = dayOf(now, 3);
    expect(uidsIn((await cab.get(`/cabinet/payments?from=${third}&to=${third}`)).body)).toEqual([during.uid]);
    expect(uidsIn((await cab.get(`/cabinet/payments?from=${third}`)).body)).toEqual([after.uid, during.uid]);
    expect(uidsIn((await cab.get(`/cabinet/payments?to=${dayOf(now, 2)}`)).body)).toEqual([before.uid]);
    expect(uidsIn((await cab.get(`/cabinet/payments?from=${dayOf(now, 5)}`)).body)).toEqual([]);
  });
});

describe('cabinet payment page', () => {
  it("shows a transaction with its card, 3-D Secure, customer and notifications; another shop's is not found", async () => {
    const { pay, cab } = await shopWithPayments();
    const p = await pay({
      customer: { email: 'buyer@example.com', ip: '10.0.0.1' },
      billing_address: { first_name: 'Ann', last_name: '<b>Lee</b>', country: 'DE', city: 'Berlin' },
      notification_url: 'https://shop.example/hook',
    });
    const page = await cab.get(`/cabinet/payments/${p.uid}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(p.uid);
    expect(page.body).toContain('buyer@example.com');
    expect(page.body).toContain('Ann &lt;b>Lee&lt;/b>');
    expect(page.body).toContain('successful.transaction');
    expect(page.body).toContain('https://shop.example/hook');
    expect(page.body).toContain(`href="/cabinet/payments/${p.uid}/refund"`);

    const other = await shopWithPayments();
    const foreign = await other.pay();
    for (const uid of [foreign.uid, 'not-a-uid', randomUUID()]) {
      const res = await cab.get(`/cabinet/payments/${uid}`);
      expect(res.status).toBe(404);
      expect(res.body).toContain('belongs to another shop');
      expect(res.body).not.toContain(foreign.uid);
    }
    expect((await cab.get(`/cabinet/payments/${foreign.uid}/refund`)).status).toBe(404);
    expect((await cab.get(`/cabinet/payments/${p.uid}/explode`)).status).toBe(404);
  });
});

describe('cabinet payment actions', () => {
  it('refunds part of a payment after a confirmation step, then the rest, and links the refunds', async () => {
    const { api, pay, cab } = await shopWithPayments();
    const p = await pay({ amount: 1000 });
    const form = await cab.get(`/cabinet/payments/${p.uid}/refund`);
    expect(form.status).toBe(200);
    expect(form.body).toContain('value="10.00"');
    const { review, post } = await act(cab, p.uid, 'refund', { amount: '2.50', reason: 'Damaged box' });
    expect(review.body).toContain('Refund €2.50 of');
    const done = await post();
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/cabinet/payments/${p.uid}?done=refund`);
    const after = await cab.get(done.location ?? '');
    expect(after.body).toContain('Refunded.');
    expect(after.body).toContain('Damaged box');
    const refund = uidsIn(after.body).find((u) => u !== p.uid);
    const child = await api.get(`/transactions/${refund}`);
    expect(child.body.transaction).toMatchObject({
      type: 'refund',
      amount: 250,
      parent_uid: p.uid,
      reason: 'Damaged box',
    });
    // The rest, by the form's default amount (what is left).
    const rest = await cab.get(`/cabinet/payments/${p.uid}/refund`);
    expect(rest.body).toContain('value="7.50"');
    const second = await act(cab, p.uid, 'refund', { amount: '7.50', reason: 'Rest' });
    expect((await second.post()).status).toBe(303);
    const full = await cab.get(`/cabinet/payments/${p.uid}`);
    expect(full.body).not.toContain(`/cabinet/payments/${p.uid}/refund"`);
  });

  it('refuses a refund without its CSRF token, and refunds nothing', async () => {
    const { h, pay, cab } = await shopWithPayments();
    const p = await pay();
    const { nonce } = await act(cab, p.uid, 'refund', { amount: '1.00', reason: 'x' });
    const res = await h.app.inject({
      method: 'POST',
      url: `/cabinet/payments/${p.uid}/refund`,
      headers: {
        cookie: [...cab.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ nonce, amount: '1.00', reason: 'x' }).toString(),
    });
    expect(res.statusCode).toBe(403);
    const [row] = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM transactions WHERE parent_uid = $1 AND type = 'refund'",
      [p.uid],
    );
    expect(row?.n).toBe(0);
  });

  it("shows the gateway's refusal of a refund above what is left on the form, with 422", async () => {
    const { h, pay, cab } = await shopWithPayments();
    const p = await pay({ amount: 1000 });
    const { post } = await act(cab, p.uid, 'refund', { amount: '10.01', reason: 'Too much' });
    const res = await post();
    expect(res.status).toBe(422);
    expect(res.body).toContain("Amount can't be greater than 1000 (10.00 EUR), the amount not yet refunded");
    expect(res.body).toContain('aria-invalid="true"');
    const bad = await cab.post(`/cabinet/payments/${p.uid}/refund`, {
      nonce: randomUUID(),
      amount: '1.234',
      reason: 'x',
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('at most 2 decimals');
    const blank = await act(cab, p.uid, 'refund', { amount: '1.00', reason: '' });
    const noReason = await blank.post();
    expect(noReason.status).toBe(422);
    expect(noReason.body).toContain("Reason can't be blank");
    const refunds = await h.db.query("SELECT 1 FROM transactions WHERE parent_uid = $1 AND type = 'refund'", [
      p.uid,
    ]);
    expect(refunds).toHaveLength(0);
  });

  it('refunds once when the confirmation is posted twice, even at the same time', async () => {
    const { h, pay, cab } = await shopWithPayments();
    const p = await pay({ amount: 1000 });
    const { post } = await act(cab, p.uid, 'refund', { amount: '1.00', reason: 'Once' });
    const [a, b] = await Promise.all([post(), post()]);
    const third = await post();
    const locations = [a.location, b.location, third.location].sort();
    expect(locations).toEqual([
      `/cabinet/payments/${p.uid}?done=refund`,
      `/cabinet/payments/${p.uid}?done=repeat`,
      `/cabinet/payments/${p.uid}?done=repeat`,
    ]);
    const refunds = await h.db.query("SELECT 1 FROM transactions WHERE parent_uid = $1 AND type = 'refund'", [
      p.uid,
    ]);
    expect(refunds).toHaveLength(1);
  });

  it('captures part of an authorization, and voids another', async () => {
    const { api, authorize, cab } = await shopWithPayments();
    const a = await authorize({ amount: 2000 });
    const page = await cab.get(`/cabinet/payments/${a.uid}`);
    expect(page.body).toContain(`/cabinet/payments/${a.uid}/capture"`);
    expect(page.body).toContain(`/cabinet/payments/${a.uid}/void"`);
    const cap = await act(cab, a.uid, 'capture', { amount: '15' });
    expect((await cap.post()).location).toBe(`/cabinet/payments/${a.uid}?done=capture`);
    const captured = await cab.get(`/cabinet/payments/${a.uid}`);
    const captureUid = uidsIn(captured.body).find((u) => u !== a.uid);
    expect((await api.get(`/transactions/${captureUid}`)).body.transaction).toMatchObject({
      type: 'capture',
      amount: 1500,
      status: 'successful',
    });
    expect(captured.body).not.toContain(`/cabinet/payments/${a.uid}/void"`);
    // A second capture is the gateway's refusal, shown on the form.
    const again = await cab.post(`/cabinet/payments/${a.uid}/capture`, { nonce: randomUUID(), amount: '1' });
    expect(again.status).toBe(422);
    expect(again.body).toContain('it has already been captured');

    const b = await authorize({ amount: 700 });
    const voidForm = await cab.get(`/cabinet/payments/${b.uid}/void`);
    expect(voidForm.body).toContain('Void authorization');
    const nonce = /name="nonce" value="([^"]+)"/.exec(voidForm.body)?.[1] ?? '';
    const voided = await cab.post(`/cabinet/payments/${b.uid}/void`, { nonce });
    expect(voided.location).toBe(`/cabinet/payments/${b.uid}?done=void`);
    const after = await cab.get(voided.location ?? '');
    expect(after.body).toContain('Voided.');
    expect(after.body).not.toContain(`/cabinet/payments/${b.uid}/capture"`);
  });
});
