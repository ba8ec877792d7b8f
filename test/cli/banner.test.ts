import { describe, expect, it } from 'vitest';
import { bannerLines, bannerText } from '../../src/cli/banner.js';
import { card, gatewayShop } from '../gateway/helpers.js';
import { customer, monthly } from '../subscriptions/helpers.js';

/**
 * What `kopek serve` prints: every address answers on the app it describes, with the placeholders
 * filled in from a real product, payment and subscription.
 */

describe('the start-up banner', () => {
  it('prints only addresses the app serves', async () => {
    const g = await gatewayShop({ threeDs: true });
    const product = await g.api.post('/products', {
      name: 'T-shirt',
      description: 'Black, size M',
      currency: 'EUR',
      amount: 1999,
    });
    expect(product.status).toBe(201);
    const payment = await g.pay({ credit_card: card('4012000000001097') });
    const subscription = await g.api.post('/subscriptions', { plan: monthly(), customer: customer() });
    expect(subscription.status).toBe(201);
    const token = subscription.body.token as string;

    const lines = bannerLines(g.h.config);
    expect(lines.map((l) => l.label).filter(Boolean)).toEqual([
      'API',
      'Docs',
      'Health',
      'Payment pages',
      '3-D Secure',
      'Cabinet',
    ]);
    const cabinet = lines.find((l) => l.label === 'Cabinet');
    expect(cabinet?.url).toBe(`${g.h.config.publicUrl}/cabinet`);
    // Without a session the cabinet sends a visitor to its sign-in page, which answers.
    const home = await g.h.app.inject({ method: 'GET', url: '/cabinet' });
    expect(home.statusCode).toBe(303);
    expect(home.headers.location).toBe('/cabinet/sign-in?next=%2Fcabinet');
    const signIn = await g.h.app.inject({ method: 'GET', url: home.headers.location as string });
    expect(signIn.statusCode).toBe(200);
    for (const { url } of lines) {
      const filled = url
        .replace('{id}', product.body.id)
        .replace('{shop_id}', String(g.shop.shop.id))
        .replace('{uid}', payment.body.transaction.uid)
        .replace('…', encodeURIComponent(token));
      expect(filled, url).not.toMatch(/[{}…]/);
      const { pathname, search } = new URL(filled);
      // The API's base is where its paths start; an authenticated list shows it answers there.
      const path = pathname === '/' ? '/products' : `${pathname}${search}`;
      const res = await g.h.app.inject({
        method: 'GET',
        url: path,
        headers: pathname === '/' ? { authorization: g.shop.auth } : {},
      });
      expect(res.statusCode, `${url} → ${path}`).toBeLessThan(400);
    }
  });

  it('names the gateway only when it is another server', () => {
    const same = {
      publicUrl: 'https://pay.example',
      checkoutUrl: 'https://pay.example',
      gatewayUrl: 'https://pay.example',
    };
    expect(bannerText(same)).not.toContain('Gateway:');
    expect(bannerText(same)).toContain('  3-D Secure:    https://pay.example/process/{uid}');
    const split = { ...same, gatewayUrl: 'https://gateway.example' };
    expect(bannerText(split)).toContain(
      '  Gateway:       https://gateway.example  (card operations go to this server)',
    );
    expect(bannerText(split)).toContain('https://gateway.example/process/{uid}');
  });
});
