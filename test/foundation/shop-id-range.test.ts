import { beforeAll, describe, expect, it } from 'vitest';
import { checkShopInput, ShopInputError } from '../../src/shops/service.js';
import { client, type Harness, harness } from '../harness.js';

/** shops.id is a 32-bit integer: a shop id beyond it names no shop and must never reach the lookup. */

let h: Harness;

beforeAll(async () => {
  h = await harness();
});

describe('shop ids in Basic credentials beyond the shops.id column', () => {
  const as = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:x`).toString('base64')}` });

  it('answers 401, as for any unknown shop', async () => {
    for (const user of ['2147483647', '2147483648', '4294967296', '9999999999', '0', '00000000001']) {
      for (const url of ['/products', '/transactions/payments']) {
        const anonymous = client(h, undefined);
        const res =
          url === '/products' ? await anonymous.get(url, as(user)) : await anonymous.post(url, {}, as(user));
        expect({ user, url, status: res.status }).toEqual({ user, url, status: 401 });
        expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
        const body = url === '/products' ? res.body : res.body.response;
        expect(body).toEqual({ message: expect.any(String), errors: { base: [expect.any(String)] } });
      }
    }
  });
});

describe('shop ids chosen on the command line', () => {
  it('refuses an id beyond the shops.id column before touching the store', () => {
    for (const id of [2_147_483_648, 9_999_999_999, 1e20, 0, -1, 1.5]) {
      expect(() => checkShopInput({ id })).toThrow(ShopInputError);
    }
    expect(() => checkShopInput({ id: 2_147_483_647 })).not.toThrow();
  });
});
