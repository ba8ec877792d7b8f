import { beforeAll, describe, expect, it } from 'vitest';
import { client, harness } from '../harness.js';
import { cardBody, subShop, card as subscriptionCard } from '../subscriptions/helpers.js';
import { card, type GatewayShop, gatewayShop } from './helpers.js';

/**
 * `POST /process/{uid}/return`: the shop's server finishes the 3-D Secure step with the cardholder's
 * answer (the platform's clients: `finalize_3ds`), and gets the transaction back as JSON.
 */

// The store starts in a hook, whose time limit is longer than a test's.
beforeAll(() => harness());

const CHALLENGE = '4012000000001097';
const FRICTIONLESS = '4012000000001006';
const FRICTIONLESS_FAILING = '4012000000001022';
const UNKNOWN_UID = '00000000-0000-4000-8000-000000000000';

async function incomplete(number = CHALLENGE, g?: GatewayShop) {
  const shop = g ?? (await gatewayShop({ threeDs: true }));
  const res = await shop.pay({ credit_card: card(number), return_url: 'https://shop.example/back' });
  expect(res.body.transaction.status).toBe('incomplete');
  return { g: shop, uid: res.body.transaction.uid as string };
}

const finish = (g: GatewayShop, uid: string, body: unknown) => g.api.post(`/process/${uid}/return`, body);
const form = (g: GatewayShop, uid: string, body: string) =>
  g.h.app.inject({
    method: 'POST',
    url: `/process/${uid}/return`,
    headers: { authorization: g.shop.auth, 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
  });
const statusOf = async (g: GatewayShop, uid: string) =>
  (await g.api.get(`/transactions/${uid}`)).body.transaction.status;
const notFound = { response: { message: 'Record not found', errors: { base: ['Record not found'] } } };

describe('POST /process/{uid}/return', () => {
  it('passes the challenge and answers the transaction, as GET /transactions/{uid} does', async () => {
    const { g, uid } = await incomplete();
    const res = await finish(g, uid, { outcome: 'passed' });
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({
      uid,
      status: 'successful',
      message: 'Successfully processed',
      three_d_secure_verification: { status: 'successful', pa_status: 'Y' },
    });
    expect(res.body.transaction.redirect_url).toBeUndefined();
    expect(res.body).toEqual((await g.api.get(`/transactions/${uid}`)).body);
  });

  it("takes the platform clients' body, pa_res and md: the cardholder came back, the card decides", async () => {
    const { g, uid } = await incomplete();
    const res = await finish(g, uid, { pa_res: 'eJzVWNmyo0gO/RXHnUeH', md: 'md-1', uid });
    expect(res.status).toBe(200);
    expect(res.body.transaction).toMatchObject({ uid, status: 'successful' });
  });

  it('fails on the form the 3-D Secure page posts, outcome=failed', async () => {
    const { g, uid } = await incomplete();
    const res = await form(g, uid, 'outcome=failed');
    expect(res.statusCode).toBe(200);
    expect(res.json().transaction).toMatchObject({
      uid,
      status: 'failed',
      message: '3-D Secure authentication failed',
      three_d_secure_verification: { status: 'failed', fail_reason: 'Challenge failed' },
    });
  });

  it('lets the card decide a frictionless step, whatever the answer', async () => {
    const passing = await incomplete(FRICTIONLESS);
    expect((await finish(passing.g, passing.uid, { outcome: 'failed' })).body.transaction.status).toBe(
      'successful',
    );
    const failing = await incomplete(FRICTIONLESS_FAILING);
    expect((await finish(failing.g, failing.uid, { outcome: 'passed' })).body.transaction.status).toBe(
      'failed',
    );
  });

  it('answers a repeated return with the transaction as the first left it', async () => {
    const { g, uid } = await incomplete();
    const first = await finish(g, uid, { outcome: 'passed' });
    const again = await finish(g, uid, { outcome: 'failed' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
  });

  it('settles the subscription whose first charge it was', async () => {
    const s = await subShop({ threeDs: true });
    const sub = (await s.api.post('/subscriptions', cardBody({ card: subscriptionCard(CHALLENGE) }))).body;
    expect(sub.state).toBe('redirecting');
    const uid = sub.last_transaction.uid;
    const res = await s.api.post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(res.body.transaction.status).toBe('successful');
    const [row] = await s.h.db.query<{ state: string }>('SELECT state FROM subscriptions WHERE id = $1', [
      sub.id,
    ]);
    expect(row?.state).toBe('active');
  });

  it.each([
    [{}, "Outcome can't be blank.", { outcome: ["can't be blank"] }],
    [
      { outcome: 'maybe' },
      'Outcome is not included in the list.',
      { outcome: ['is not included in the list'] },
    ],
    [{ pa_res: 5 }, 'Pa res must be a string.', { pa_res: ['must be a string'] }],
  ])('refuses %j and changes nothing', async (body, message, errors) => {
    const { g, uid } = await incomplete();
    const res = await finish(g, uid, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ response: { message, errors } });
    expect(await statusOf(g, uid)).toBe('incomplete');
  });

  it('answers 404 for an unknown or malformed uid, and a transaction without a 3-D Secure step', async () => {
    const g = await gatewayShop({ threeDs: true });
    const paid = (await g.pay()).body.transaction.uid;
    for (const uid of [UNKNOWN_UID, 'not-a-uid', paid]) {
      const res = await finish(g, uid, { outcome: 'passed' });
      expect(res.status, uid).toBe(404);
      expect(res.body).toEqual(notFound);
    }
  });

  it("answers another shop's transaction as unknown and leaves it waiting", async () => {
    const { g: owner, uid } = await incomplete();
    const other = await gatewayShop({ threeDs: true });
    const res = await finish(other, uid, { outcome: 'failed' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(notFound);
    expect(await statusOf(owner, uid)).toBe('incomplete');
  });

  it('asks for credentials: the cardholder uses the page, the shop its key', async () => {
    const { g, uid } = await incomplete();
    const res = await client(g.h, undefined).post(`/process/${uid}/return`, { outcome: 'passed' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="Kopek"');
    expect(res.body.response.errors.base).toHaveLength(1);
    expect(await statusOf(g, uid)).toBe('incomplete');
  });
});
