import { afterEach, describe, expect, it, vi } from 'vitest';
import { InProcessGatewayClient } from '../../src/gateway/client.js';
import { KOPEK_CARDS } from '../../src/gateway/test-cards.js';
import { card, cardBody, countRows, monthly, paymentsOf, type SubShop, subShop } from './helpers.js';

/**
 * With the gateway in this process, a card subscription is created in one batch with its first
 * payment; with a remote gateway (or a charge that cannot be planned) it is claimed, charged and
 * recorded step by step. Both must leave the same subscription, charge record and ledger behind.
 */

afterEach(() => {
  vi.restoreAllMocks();
});

/** Forces the step-by-step path, as a remote gateway (which cannot plan) would. */
const stepByStep = () =>
  vi.spyOn(InProcessGatewayClient.prototype, 'planPayment').mockResolvedValue(undefined);

const ID = /^(sbs|pln|cst)_[0-9A-Za-z]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^[0-9A-Za-z]{64}$/;

/** The same data with every generated id, uid, token and stamp replaced by its kind. */
function normalized(value: unknown): unknown {
  if (typeof value === 'string') {
    if (ID.test(value)) return `<${value.slice(0, 3)}>`;
    if (UUID.test(value)) return '<uid>';
    if (SECRET.test(value)) return '<secret>';
    return value
      .replace(/(sbs|pln|cst)_[0-9A-Za-z]+/g, '<$1>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>');
  }
  if (Array.isArray(value)) return value.map(normalized);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === 'shop_id' ? '<shop>' : normalized(v)]),
    );
  }
  return value;
}

async function outcome(s: SubShop, body: Record<string, unknown>) {
  const res = await s.api.post('/subscriptions', body);
  const charges = await s.h.db.query(
    `SELECT c.period, c.amount, c.currency, c.status, c.attempt, c.transaction_uid IS NOT NULL AS has_uid
     FROM subscription_charges c JOIN subscriptions s ON s.id = c.subscription_id WHERE s.shop_id = $1`,
    [s.shop.shop.id],
  );
  const ledger = await s.h.db.query(
    `SELECT type, status, message, amount, currency, description, tracking_id, card, details, three_d_secure
     FROM transactions WHERE shop_id = $1 ORDER BY seq`,
    [s.shop.shop.id],
  );
  const fetched = res.body.id ? (await s.api.get(`/subscriptions/${res.body.id}`)).body : undefined;
  return normalized({ status: res.status, body: res.body, fetched, charges, ledger });
}

const cases: { name: string; shop?: { threeDs: boolean }; body: Record<string, unknown> }[] = [
  { name: 'an approved card', body: cardBody() },
  { name: 'a declined card', body: cardBody({ card: card('4005550000000019') }) },
  { name: 'the gateway error card', body: cardBody({ card: card(KOPEK_CARDS.error) }) },
  { name: 'the card whose charge times out', body: cardBody({ card: card(KOPEK_CARDS.timeout) }) },
  {
    name: 'a card with a 3-D Secure challenge',
    shop: { threeDs: true },
    body: cardBody({ card: card('4012000000003010'), return_url: 'https://shop.example/back?x=1' }),
  },
  {
    name: 'a paid trial',
    body: cardBody({ plan: monthly({ trial: { amount: 100, interval: 7, interval_unit: 'day' } }) }),
  },
  {
    name: 'every request field and a CVC rule',
    body: cardBody({
      tracking_id: 'order-17',
      device_id: 'dev-1',
      notification_url: 'https://shop.example/hook',
      additional_data: { contract: ['a', 'b'] },
      receipt_text: ['Thank you'],
      settings: { language: 'de' },
      dynamic_billing_descriptor: 'GOLD',
      card: card(undefined, { verification_value: '222' }),
      avs_cvc_verification: { cvc_verification: { rejection_codes: ['N'] } },
    }),
  },
];

describe('subscriptions: the first charge in one batch and step by step', () => {
  for (const c of cases) {
    it(`give the same result for ${c.name}`, async () => {
      const batched = await outcome(await subShop(c.shop), c.body);
      stepByStep();
      const stepped = await outcome(await subShop(c.shop), c.body);
      expect(batched).toEqual(stepped);
    });
  }

  it('give the same result for an existing customer, plan and card token', async () => {
    const run = async () => {
      const s = await subShop();
      const plan = (await s.api.post('/plans', monthly())).body;
      const cust = (await s.api.post('/customers', { email: 'jo@example.com', ip: '203.0.113.9' })).body;
      const token = (await s.api.post('/credit_cards', { request: card() })).body.token;
      return outcome(s, {
        plan: { id: plan.id },
        customer: { id: cust.id },
        card: { token, verification_value: '123' },
      });
    };
    const batched = await run();
    stepByStep();
    expect(await run()).toEqual(batched);
  });
});

describe('subscriptions: the batch that creates one', () => {
  it('commits the card, plan, customer, subscription and payment together, or none of them', async () => {
    const s = await subShop();
    const batch = s.h.db.batch.bind(s.h.db);
    const tx = vi.spyOn(s.h.db, 'tx');
    // The store fails the batch at its very end, after every row of the subscription was written.
    const spy = vi
      .spyOn(s.h.db, 'batch')
      .mockImplementation((statements) => batch([...statements, { sql: 'SELECT 1 / 0' }]));
    const res = await s.api.post('/subscriptions', cardBody());
    expect(res.status).toBe(500);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(tx).not.toHaveBeenCalled();
    expect(await paymentsOf(s.h, s.shop)).toEqual([]);
    for (const table of ['subscriptions', 'plans', 'customers'] as const)
      expect(await countRows(s.h, table, s.shop)).toBe(0);
    const [cards] = await s.h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM cards WHERE shop_id = $1',
      [s.shop.shop.id],
    );
    expect(cards?.n).toBe(0);

    spy.mockRestore();
    const again = await s.api.post('/subscriptions', cardBody());
    expect(again.status).toBe(201);
    expect(again.body.state).toBe('active');
    expect(await paymentsOf(s.h, s.shop)).toEqual([
      expect.objectContaining({ status: 'successful', amount: 1999 }),
    ]);
  });

  it('is not used for a free trial or the card whose outcome depends on its history', async () => {
    const s = await subShop();
    const batch = vi.spyOn(s.h.db, 'batch');
    const trial = await s.api.post(
      '/subscriptions',
      cardBody({ plan: monthly({ trial: { amount: 0, interval: 1, interval_unit: 'month' } }) }),
    );
    expect(trial.body.state).toBe('trial');
    const first = await s.api.post('/subscriptions', cardBody({ card: card(KOPEK_CARDS.firstThenDeclined) }));
    expect(first.body.state).toBe('active');
    const second = await s.api.post(
      '/subscriptions',
      cardBody({ card: card(KOPEK_CARDS.firstThenDeclined) }),
    );
    expect(second.body).toMatchObject({ state: 'failed', last_transaction: { status: 'failed' } });
    expect(batch).not.toHaveBeenCalled();
  });
});
