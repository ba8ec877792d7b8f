import { afterEach, describe, expect, it, vi } from 'vitest';
import { billDue } from '../../../src/billing/renew.js';
import { loadCtpCheckout, payCtpCheckout } from '../../../src/checkout/api/pay.js';
import { findCtp } from '../../../src/checkout/api/repository.js';
import type { Ctx, Services } from '../../../src/context.js';
import { type GatewayClient, InProcessGatewayClient } from '../../../src/gateway/client.js';
import {
  loadSubscriptionCheckout,
  paySubscriptionCheckout,
} from '../../../src/subscriptions/hosted-payment.js';
import { CHARGE_LEASE_MS } from '../../../src/subscriptions/schedule.js';
import { client, type Harness, harness, newShop, withClock } from '../../harness.js';
import { monthly, subShop } from '../../subscriptions/helpers.js';

/**
 * Money is never taken twice, even when the process dies in the middle of a try. A "crash" is a
 * gateway that charges and then never gives its answer back to the caller (it throws, or never
 * settles, as a killed process would): whatever the store keeps afterwards is what a restarted
 * process finds, and the buyer's retry must be charged at most once in all.
 */

const order = (tracking?: string) => ({
  checkout: {
    transaction_type: 'payment',
    order: {
      amount: 4200,
      currency: 'USD',
      description: 'Order #7',
      ...(tracking ? { tracking_id: tracking } : {}),
    },
    settings: { success_url: 'https://shop.example/ok', language: 'en' },
  },
});

const card = {
  number: '4200000000000000',
  holder: 'JANE DOE',
  exp_month: '12',
  exp_year: '2030',
  verification_value: '123',
};

const servicesOf = (h: Harness, remote: boolean): Services => ({
  ...h.app.services,
  config: { ...h.app.services.config, gatewayRemote: remote },
});

/** The gateway of `ctx` with its payment replaced: `died` runs instead, given the real one. */
function dyingGateway(died: (real: GatewayClient, request: unknown) => Promise<never>) {
  return (ctx: Ctx): GatewayClient => {
    const real = new InProcessGatewayClient(ctx);
    return new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'payment') return (request: unknown) => died(target, request);
        return Reflect.get(target, prop, receiver);
      },
    });
  };
}

const chargedThenDied = dyingGateway(async (real, request) => {
  await real.payment(request as never);
  throw new Error('the process died after the payment');
});
const diedBeforeCharging = dyingGateway(async () => {
  throw new Error('the process died before the payment reached the gateway');
});

async function openCheckout(tracking?: string) {
  const h = await harness();
  const shop = await newShop(h);
  const api = client(h, shop);
  const created = await api.post('/ctp/api/checkouts', order(tracking));
  expect(created.status).toBe(201);
  return { h, shop, api, token: created.body.checkout.token as string };
}

const paymentsOfShop = (h: Harness, shopId: number) =>
  h.db.query<{ status: string; tracking_id: string | null }>(
    "SELECT status, tracking_id FROM transactions WHERE shop_id = $1 AND type = 'payment'",
    [shopId],
  );

async function pay(services: Services, token: string, gatewayOf?: (ctx: Ctx) => GatewayClient) {
  const c = await loadCtpCheckout(services, token, gatewayOf);
  if (!c) throw new Error('checkout not found');
  return payCtpCheckout(c, { card, customer: {}, ip: '203.0.113.9' }, gatewayOf);
}

describe('checkout API: a try that dies mid-charge', () => {
  it('in process: the claim, the payment and its outcome roll back together; a retry pays once', async () => {
    const { h, shop, api, token } = await openCheckout('order-7');
    const services = servicesOf(h, false);
    await expect(pay(services, token, chargedThenDied)).rejects.toThrow(/died after the payment/);
    // Nothing of the try stayed: no payment, no claim, and the buyer may try again at once.
    expect(await paymentsOfShop(h, shop.shop.id)).toEqual([]);
    expect(await findCtp(h.db, token)).toMatchObject({ tries: 0, paying_until: null, status: null });

    expect(await pay(services, token)).toEqual({ kind: 'done' });
    expect(await paymentsOfShop(h, shop.shop.id)).toEqual([{ status: 'successful', tracking_id: 'order-7' }]);
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got).toMatchObject({ finished: true, status: 'successful' });
    expect(await pay(services, token)).toEqual({ kind: 'done' });
    expect(await paymentsOfShop(h, shop.shop.id)).toHaveLength(1);
  });

  it('remote gateway, charged then died: the try is found by its key, never charged again', async () => {
    const { h, shop, api, token } = await openCheckout('order-8');
    const services = servicesOf(h, true);
    const gatewayOf = (ctx: Ctx) => new InProcessGatewayClient(ctx);
    expect(await pay(services, token, chargedThenDied)).toEqual({ kind: 'unavailable' });
    expect(await paymentsOfShop(h, shop.shop.id)).toHaveLength(1);
    const claimed = await findCtp(h.db, token);
    expect(claimed).toMatchObject({ tries: 1, status: null });
    expect(claimed?.paying_until).not.toBeNull();

    // While the try's lease lasts, another post waits for it instead of charging.
    expect(await pay(services, token, gatewayOf)).toEqual({ kind: 'busy' });
    expect(await paymentsOfShop(h, shop.shop.id)).toHaveLength(1);

    // Once the lease is over, the gateway is asked for the try's key before anything else.
    await withClock(h, 3 * 60_000, async () => {
      const c = await loadCtpCheckout(services, token, gatewayOf);
      expect(c?.row).toMatchObject({ status: 'successful', tries: 1, paying_until: null });
      expect(c?.row.finished_at).not.toBeNull();
      expect(await pay(services, token, gatewayOf)).toEqual({ kind: 'done' });
    });
    expect(await paymentsOfShop(h, shop.shop.id)).toEqual([{ status: 'successful', tracking_id: 'order-8' }]);
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got).toMatchObject({ finished: true, status: 'successful' });
    expect(got.gateway_response.transaction.additional_data.checkout_try).toBe(`${token}-1`);
  });

  it('remote gateway, died before the charge: the try is let go and the retry pays once', async () => {
    const { h, shop, token } = await openCheckout();
    const services = servicesOf(h, true);
    const gatewayOf = (ctx: Ctx) => new InProcessGatewayClient(ctx);
    expect(await pay(services, token, diedBeforeCharging)).toEqual({ kind: 'unavailable' });
    expect(await paymentsOfShop(h, shop.shop.id)).toEqual([]);
    await withClock(h, 3 * 60_000, async () => {
      const c = await loadCtpCheckout(services, token, gatewayOf);
      expect(c?.row).toMatchObject({ status: null, tries: 1, paying_until: null });
      expect(await pay(services, token, gatewayOf)).toEqual({ kind: 'done' });
      expect(await pay(services, token, gatewayOf)).toEqual({ kind: 'done' });
    });
    // Without a tracking_id of the shop's, the try's key is the payment's tracking_id.
    expect(await paymentsOfShop(h, shop.shop.id)).toEqual([
      { status: 'successful', tracking_id: `${token}-2` },
    ]);
  });

  it('a form posted again for a try that was already declined makes no new try', async () => {
    const { h, shop, token } = await openCheckout();
    const services = servicesOf(h, false);
    const c = await loadCtpCheckout(services, token);
    if (!c) throw new Error('checkout not found');
    const declined = { ...card, number: '4005550000000019' };
    const form = { card: declined, customer: {}, ip: '203.0.113.9', formTry: 0 };
    expect(await payCtpCheckout(c, form)).toEqual({ kind: 'done' });
    expect(await payCtpCheckout(c, form)).toEqual({ kind: 'busy' });
    expect(await paymentsOfShop(h, shop.shop.id)).toHaveLength(1);
    expect(await findCtp(h.db, token)).toMatchObject({ tries: 1, failed_attempts: 1 });
  });
});

describe('subscription checkout page: a first charge that dies mid-charge', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The gateway's payment hangs forever, after or before charging: the process "died" there. */
  function hangPayment(charge: boolean) {
    const real = InProcessGatewayClient.prototype.payment;
    vi.spyOn(InProcessGatewayClient.prototype, 'payment').mockImplementationOnce(async function (
      this: InProcessGatewayClient,
      request,
    ) {
      if (charge) await real.call(this, request);
      return new Promise<never>(() => {});
    });
  }

  async function redirectSub() {
    const s = await subShop();
    const res = await s.api.post('/subscriptions', {
      plan: monthly(),
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      return_url: 'https://shop.example/back',
    });
    expect(res.status).toBe(201);
    return { ...s, id: res.body.id as string, token: res.body.token as string };
  }

  const payments = (s: { h: Harness; shop: { shop: { id: number } } }) => paymentsOfShop(s.h, s.shop.shop.id);

  async function startPaying(s: Awaited<ReturnType<typeof redirectSub>>) {
    const sc = await loadSubscriptionCheckout(s.h.app.services, s.token);
    if (!sc) throw new Error('checkout not found');
    // Never settles: this "process" is gone; only what it committed remains.
    void paySubscriptionCheckout(sc, { card, ip: '203.0.113.7' });
    await vi.waitFor(async () => {
      const [row] = await s.h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM subscription_charges WHERE subscription_id = $1',
        [s.id],
      );
      expect(row?.n).toBe(1);
    });
  }

  it('charged then died: the page finds the charge by its tracking id; billing charges nothing more', async () => {
    const s = await redirectSub();
    hangPayment(true);
    await startPaying(s);
    await vi.waitFor(async () => expect(await payments(s)).toHaveLength(1));
    const sc = await loadSubscriptionCheckout(s.h.app.services, s.token);
    expect(sc?.sub.state).toBe('active');
    await withClock(s.h, CHARGE_LEASE_MS + 60_000, () =>
      billDue(s.h.app.services, { shopId: s.shop.shop.id }),
    );
    expect(await payments(s)).toEqual([{ status: 'successful', tracking_id: `${s.id}-1` }]);
    expect((await s.api.get(`/subscriptions/${s.id}`)).body.state).toBe('active');
  });

  it('died before the charge: billing finds nothing under its tracking id and ends it, charging nothing', async () => {
    const s = await redirectSub();
    hangPayment(false);
    await startPaying(s);
    expect(await payments(s)).toEqual([]);
    await withClock(s.h, CHARGE_LEASE_MS + 60_000, async () => {
      await billDue(s.h.app.services, { shopId: s.shop.shop.id });
      await billDue(s.h.app.services, { shopId: s.shop.shop.id });
    });
    // Nothing at the gateway under the attempt's tracking id: the attempt is abandoned, and a first
    // charge that never reached the gateway ends the subscription as failed, with nothing charged.
    expect(await payments(s)).toEqual([]);
    const got = (await s.api.get(`/subscriptions/${s.id}`)).body;
    expect(got.state).toBe('failed');
    expect(got.cancel_reason).toMatch(/never reached the gateway/);
    // A later pass charges nothing more.
    await withClock(s.h, CHARGE_LEASE_MS + 120_000, () =>
      billDue(s.h.app.services, { shopId: s.shop.shop.id }),
    );
    expect(await payments(s)).toEqual([]);
  });
});
