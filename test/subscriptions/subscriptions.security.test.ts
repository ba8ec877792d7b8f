import { beforeAll, describe, expect, it } from 'vitest';
import { type Client, client } from '../harness.js';
import { cardBody, countRows, monthly, paymentsOf, type SubShop, subShop } from './helpers.js';

let mine: SubShop;
let theirs: SubShop;
let theirActive: { id: string; card: { token: string }; customer: { id: string }; plan: { id: string } };

beforeAll(async () => {
  mine = await subShop();
  theirs = await subShop();
  theirActive = (await theirs.api.post('/subscriptions', cardBody({ tracking_id: 'shared-order' }))).body;
});

/** Every string or number in `value` that holds the card number or is exactly the CVC. */
function leaked(value: unknown, number: string, cvc: string): string[] {
  if (typeof value === 'string' || typeof value === 'number') {
    const text = String(value);
    return text.includes(number) || text === cvc ? [text] : [];
  }
  if (value && typeof value === 'object') return Object.values(value).flatMap((v) => leaked(v, number, cvc));
  return [];
}

const notFound = { message: 'Record not found', errors: { base: ['Record not found'] } };

describe('subscriptions: security', () => {
  it('answers 401 without credentials on every endpoint', async () => {
    const anon: Client = client(mine.h, undefined);
    for (const res of [
      await anon.post('/subscriptions', { plan: monthly() }),
      await anon.get('/subscriptions'),
      await anon.get(`/subscriptions/${theirActive.id}`),
      await anon.post(`/subscriptions/${theirActive.id}/cancel`, { cancel_reason: 'x' }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
      expect(res.body.errors.base).toHaveLength(1);
    }
    expect(await countRows(mine.h, 'subscriptions', mine.shop)).toBe(0);
  });

  it("answers 404 for another shop's subscription on read and cancel, and leaves it alone", async () => {
    const get = await mine.api.get(`/subscriptions/${theirActive.id}`);
    expect(get.status).toBe(404);
    expect(get.body).toEqual(notFound);
    const cancel = await mine.api.post(`/subscriptions/${theirActive.id}/cancel`, {
      cancel_reason: 'hostile',
    });
    expect(cancel.status).toBe(404);
    expect(cancel.body).toEqual(notFound);
    expect((await theirs.api.get(`/subscriptions/${theirActive.id}`)).body.state).toBe('active');
  });

  it("never lists another shop's subscriptions, whatever the filter", async () => {
    await mine.api.post('/subscriptions', { plan: monthly() });
    for (const query of [
      '',
      '?tracking_id=shared-order',
      `?customer_id=${theirActive.customer.id}`,
      `?plan_id=${theirActive.plan.id}`,
      '?state=active',
    ]) {
      const res = await mine.api.get(`/subscriptions${query}`);
      expect(res.status).toBe(200);
      expect(res.body.map((x: { id: string }) => x.id)).not.toContain(theirActive.id);
    }
    const cursor = await mine.api.get(`/subscriptions?starting_after=${theirActive.id}`);
    expect(cursor.status).toBe(422);
  });

  it("treats another shop's card token, customer and plan as not existing, and charges nothing", async () => {
    const res = await mine.api.post('/subscriptions', {
      plan: { id: theirActive.plan.id },
      customer: { id: theirActive.customer.id },
      card: { token: theirActive.card.token },
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message:
        "Customer with this ID doesn't exist for this account and Plan with this ID doesn't exist for this account",
      errors: {
        customer: { base: ["customer with this ID doesn't exist for this account"] },
        plan: { base: ["plan with this ID doesn't exist for this account"] },
      },
    });
    const tokenOnly = await mine.api.post(
      '/subscriptions',
      cardBody({ card: { token: theirActive.card.token, verification_value: '123' } }),
    );
    expect(tokenOnly.status).toBe(422);
    expect(tokenOnly.body).toEqual({
      message: "Card with this token doesn't exist for this account",
      errors: { card: { base: ["card with this token doesn't exist for this account"] } },
    });
    expect(await paymentsOf(mine.h, mine.shop)).toEqual([]);
  });

  it('never writes the card number or the CVC into a response or a log line', async () => {
    const number = '4111111111111111';
    const cvc = '9731';
    const before = mine.h.logs.length;
    const res = await mine.api.post(
      '/subscriptions',
      cardBody({
        card: { number, verification_value: cvc, holder: 'JANE DOE', exp_month: '12', exp_year: '2030' },
      }),
    );
    expect(res.status).toBe(201);
    const bad = await mine.api.post(
      '/subscriptions',
      cardBody({
        card: { number, verification_value: cvc, holder: 'H'.repeat(40), exp_month: '12', exp_year: '2030' },
      }),
    );
    expect(bad.status).toBe(422);
    // Structural checks: a 4-digit CVC would turn up by chance inside random hex (uids, stamps, tokens).
    for (const text of [res.text, bad.text, (await mine.api.get(`/subscriptions/${res.body.id}`)).text]) {
      expect(leaked(JSON.parse(text), number, cvc)).toEqual([]);
    }
    const lines = mine.h.logs.slice(before);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(leaked(JSON.parse(line), number, cvc)).toEqual([]);
  });

  it('does not let a request pick another shop for an inline plan', async () => {
    const res = await mine.api.post('/subscriptions', { plan: monthly({ shop_id: theirs.shop.shop.id }) });
    expect(res.status).toBe(422);
    expect(res.body.errors.plan.shop_id).toBeDefined();
  });
});
