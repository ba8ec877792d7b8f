import { describe, expect, it } from 'vitest';
import { billDue } from '../../../src/billing/renew.js';
import { KOPEK_CARDS } from '../../../src/gateway/test-cards.js';
import { withClock } from '../../harness.js';
import { monthly, subShop } from '../../subscriptions/helpers.js';
import { goodCard, openPage, postForm } from '../forms.js';

/**
 * The buyer's result page of a hosted-page subscription the shop cancelled while its first charge
 * was open: it says the shop cancelled the payment, never "declined" over a charge that went through.
 */

async function hostedSub(threeDs = false) {
  const s = await subShop({ threeDs });
  const res = await s.api.post('/subscriptions', {
    plan: monthly(),
    customer: { email: 'jane@example.com', ip: '203.0.113.7' },
    return_url: 'https://shop.example/back',
  });
  expect(res.status).toBe(201);
  return { ...s, id: res.body.id as string, token: res.body.token as string };
}

async function paidWith(number: string, threeDs = false) {
  const s = await hostedSub(threeDs);
  const page = await openPage(s.h, s.token);
  expect((await postForm(s.h, page, s.token, goodCard(number))).status).toBe(303);
  return s;
}

describe('the result page of a subscription cancelled while its payment was open', () => {
  it('says the shop cancelled it when the 3-D Secure step was open', async () => {
    const s = await paidWith('4012000000001097', true);
    const waiting = await s.api.get(`/subscriptions/${s.id}`);
    const uid = waiting.body.last_transaction.uid as string;
    expect((await s.api.post(`/subscriptions/${s.id}/cancel`, { cancel_reason: 'No' })).status).toBe(200);
    // The buyer comes back from the bank page, which refused to complete the payment.
    expect((await s.api.post(`/process/${uid}/return`, { outcome: 'passed' })).body.transaction.status).toBe(
      'failed',
    );
    const result = await openPage(s.h, s.token);
    expect(result.html).toContain('This payment was cancelled by the shop');
    expect(result.html).not.toContain('Payment declined');
    expect(result.html).not.toContain('Successfully processed');
  });

  it('says the payment was refunded when it went through after the cancel', async () => {
    const s = await hostedSub();
    const page = await openPage(s.h, s.token);
    // The bank does not answer; the buyer's post waits for it while the shop cancels.
    const posted = postForm(s.h, page, s.token, goodCard(KOPEK_CARDS.timeout));
    while ((await s.api.get(`/subscriptions/${s.id}`)).body.state !== 'processing')
      await new Promise((r) => setTimeout(r, 20));
    expect((await s.api.post(`/subscriptions/${s.id}/cancel`, { cancel_reason: 'No' })).status).toBe(200);
    expect((await posted).status).toBe(303);
    await withClock(s.h, 10 * 60_000, () => billDue(s.h.app.services, { shopId: s.shop.shop.id }));
    const read = await s.api.get(`/subscriptions/${s.id}`);
    expect(read.body).toMatchObject({ state: 'canceled', last_transaction: { status: 'successful' } });
    const result = await openPage(s.h, s.token);
    expect(result.html).toContain('This payment was cancelled by the shop');
    expect(result.html).toContain('refunded');
    expect(result.html).not.toContain('Payment declined');
  });
});
