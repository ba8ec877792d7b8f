import { describe, expect, it } from 'vitest';
import { everyText, periodText } from '../../src/cabinet/subscriptions/format.js';
import { descriptionText, languageName, russianMessage } from '../../src/cabinet/words.js';
import { client, harness, newShop } from '../harness.js';
import { card, customer, monthly } from '../subscriptions/helpers.js';
import { signedIn } from './session.js';

/** How the cabinet says periods, the platform's messages and its own words in each language. */

describe('periods, by the language plural rules', () => {
  it.each([
    [1, 'month', 'ru', 'раз в месяц', '1 месяц'],
    [2, 'month', 'ru', 'каждые 2 месяца', '2 месяца'],
    [5, 'month', 'ru', 'каждые 5 месяцев', '5 месяцев'],
    [11, 'month', 'ru', 'каждые 11 месяцев', '11 месяцев'],
    [21, 'day', 'ru', 'каждый 21 день', '21 день'],
    [22, 'day', 'ru', 'каждые 22 дня', '22 дня'],
    [1, 'week', 'ru', 'раз в неделю', '1 неделя'],
    [1, 'year', 'ru', 'раз в год', '1 год'],
    [3, 'year', 'ru', 'каждые 3 года', '3 года'],
    [7, 'year', 'ru', 'каждые 7 лет', '7 лет'],
    [1, 'hour', 'ru', 'раз в час', '1 час'],
    [1, 'month', 'en', 'every month', '1 month'],
    [3, 'month', 'en', 'every 3 months', '3 months'],
    [1, 'day', 'en', 'every day', '1 day'],
  ] as const)('%i %s in %s: %s', (n, unit, lang, every, period) => {
    expect(everyText(n, unit, lang)).toBe(every);
    expect(periodText(n, unit, lang)).toBe(period);
  });
});

describe("the platform's English messages in Russian", () => {
  it.each([
    ['Successfully processed', 'Успешно обработано'],
    ['Payment was approved', 'Платёж одобрен'],
    ['Payment was declined', 'Банк отклонил платёж'],
    ['Insufficient funds', 'Недостаточно средств на карте'],
    ['First payment failed: Payment was declined', 'Первая оплата не прошла: Банк отклонил платёж'],
    ['Proof matches the transaction', 'Подтверждение совпадает с транзакцией'],
  ])('%s', (english, russian) => {
    expect(russianMessage(english)).toBe(russian);
  });

  it('knows nothing of a message it has no words for (the page then shows it marked as English)', () => {
    expect(russianMessage('Something new from a bank')).toBeUndefined();
    expect(russianMessage('First payment failed: Something new')).toBeUndefined();
  });

  it("writes Kopek's own words in a description, and languages by name", () => {
    expect(descriptionText('Gold (subscription sbs_1a2B)', 'ru')).toBe('Gold (подписка sbs_1a2B)');
    expect(descriptionText('Gold (subscription sbs_1a2B)', 'en')).toBe('Gold (subscription sbs_1a2B)');
    expect(languageName('ru', 'ru')).toBe('русский');
    expect(languageName('en', 'ru')).toBe('английский');
    expect(languageName('ru', 'en')).toBe('Russian');
  });
});

describe('a Russian subscription page', () => {
  it('says its period, money, order number and the gateway message in Russian', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const api = client(h, shop);
    const res = await api.post('/subscriptions', {
      plan: monthly({ currency: 'RUB', plan: { amount: 129000, interval: 2, interval_unit: 'month' } }),
      customer: customer(),
      card: card(),
      tracking_id: 'order-42',
    });
    expect(res.status, res.text).toBe(201);
    const c = await signedIn(h, shop);
    c.cookies.set('kopek_lang', 'ru');
    const page = (await c.get(`/cabinet/subscriptions/${res.body.id}`)).body;
    expect(page).toContain('<html lang="ru">');
    expect(page).toContain('<span class="money">1\u00a0290,00\u00a0₽</span> каждые 2 месяца');
    expect(page).not.toContain('каждые 1');
    expect(page).toContain('Номер заказа магазина');
    expect(page).not.toContain('Tracking id');
    expect(page).toMatch(
      /Успешно обработано <span class="muted api-message" lang="en">\(Successfully processed\)<\/span>/,
    );
    expect(page).toMatch(/<span class="badge successful">успешно<\/span>/);
    c.cookies.set('kopek_lang', 'en');
    const english = (await c.get(`/cabinet/subscriptions/${res.body.id}`)).body;
    expect(english).toContain('<span class="money">RUB\u00a01,290.00</span> every 2 months');
    expect(english).toContain('Successfully processed');
  });
});
