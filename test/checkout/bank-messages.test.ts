import { describe, expect, it } from 'vitest';
import { bankMessage } from '../../src/checkout/bank-messages.js';
import { AcquirerMsg } from '../../src/gateway/acquirer.js';
import { client, harness, newShop } from '../harness.js';
import { monthly, subShop } from '../subscriptions/helpers.js';
import { goodCard, openPage, postForm } from './forms.js';

/** A bank's decline on a Russian page is told in Russian; the API keeps the gateway's English words. */

describe('bankMessage', () => {
  it('translates every message the sandbox acquirer gives', () => {
    for (const message of Object.values(AcquirerMsg)) {
      const ru = bankMessage(message, 'ru');
      expect(ru, message).not.toBe(message);
      expect(ru, message).toMatch(/[а-яё]/i);
      expect(ru, message).not.toContain('ответ банка');
    }
    expect(bankMessage(AcquirerMsg.insufficientFunds, 'ru')).toBe('недостаточно средств на карте');
    expect(bankMessage(AcquirerMsg.insufficientFunds, 'en')).toBe('Insufficient funds');
  });

  it("reads a subscription's reason and quotes a message it does not know", () => {
    expect(bankMessage('First payment failed: Payment was declined', 'ru')).toBe('банк отклонил платёж');
    expect(bankMessage('Do not honour', 'ru')).toBe('банк отклонил операцию (ответ банка: «Do not honour»)');
    expect(bankMessage(null, 'ru')).toBe('');
  });
});

describe('Russian checkout pages after a decline', () => {
  it('the checkout API page says why in Russian, and the API keeps the English message', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const api = client(h, shop);
    const created = await api.post('/ctp/api/checkouts', {
      checkout: {
        transaction_type: 'payment',
        attempts: 3,
        order: { amount: 990, currency: 'RUB', description: 'Заказ 5' },
        settings: { language: 'ru', decline_url: 'https://shop.example/declined' },
      },
    });
    const token = created.body.checkout.token as string;
    const page = await openPage(h, token);
    expect((await postForm(h, page, token, goodCard('4005550000000019'))).status).toBe(303);
    const again = await openPage(h, token);
    expect(again.html).toContain('Платёж не прошёл: банк отклонил платёж');
    expect(again.html).not.toContain('Payment was declined');
    const got = (await api.get(`/ctp/api/checkouts/${token}`)).body.checkout;
    expect(got).toMatchObject({ status: 'failed', message: 'Payment was declined' });
  });

  it('the subscription page of a declined first charge says why in Russian', async () => {
    const s = await subShop();
    const res = await s.api.post('/subscriptions', {
      plan: monthly(),
      customer: { email: 'jane@example.com', ip: '203.0.113.7' },
      language: 'ru',
    });
    expect(res.status, res.text).toBe(201);
    const token = res.body.token as string;
    const page = await openPage(s.h, token);
    expect((await postForm(s.h, page, token, goodCard('4005550000000019'))).status).toBe(303);
    const result = await openPage(s.h, token);
    expect(result.html).toContain('Платёж не прошёл: банк отклонил платёж');
    expect(result.html).not.toContain('Payment was declined');
  });
});
