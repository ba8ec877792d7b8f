import { describe, expect, it } from 'vitest';
import { normalShopId, pairDelayMs, SIGN_IN_LIMITS } from '../../src/cabinet/sign-in-limits.js';
import { type Harness, harness, newShop, type TestShop } from '../harness.js';
import { cabinetClient } from './session.js';

/**
 * The sign-in form's limits: every spelling of a shop id is one shop, an address and shop pair waits
 * longer after every failure past the free ones, and no crowd of addresses can lock the owner out.
 */

let ipSeq = 1;
const freshIp = () => `10.77.${Math.floor(ipSeq / 250)}.${(ipSeq++ % 250) + 1}`;

async function client(h: Harness, ip = freshIp()) {
  const c = cabinetClient(h, ip);
  await c.get('/cabinet/sign-in');
  return {
    ip,
    signIn: (shopId: string, secret: string) =>
      c.post('/cabinet/sign-in', { shop_id: shopId, secret_key: secret }),
  };
}

/** Runs fn with the clock `ms` past `base`, then puts it back. */
async function at<T>(h: Harness, base: Date, ms: number, fn: () => Promise<T>): Promise<T> {
  const before = h.clock.now();
  h.clock.set(new Date(base.getTime() + ms));
  try {
    return await fn();
  } finally {
    h.clock.set(before);
  }
}

const wrong = (i: number) => `wrong-${i}`;

describe('sign-in limits', () => {
  it('reads every spelling of a shop id as that shop, and anything else as no shop', () => {
    for (const spelling of ['4', '04', ' 4', '4 ', '4.0', '+4', '+0004.00', '4.'])
      expect(normalShopId(spelling)).toBe(4);
    for (const other of ['abc', '4.5', '1e3', '0x4', '-4', '0', '', '4 4', '2147483648', '99999999999'])
      expect(normalShopId(other), other).toBeUndefined();
  });

  it('waits 30 s after the fifth failure, doubling with each one after it, to at most an hour', () => {
    expect([0, 1, 4].map(pairDelayMs)).toEqual([0, 0, 0]);
    expect([5, 6, 7, 8].map(pairDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(pairDelayMs(12)).toBe(3_600_000);
    expect(pairDelayMs(10_000)).toBe(3_600_000);
  });

  it('counts 4, 04, " 4", 4.0 and +4 as one shop', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const id = String(shop.shop.id);
    const c = await client(h);
    for (const spelling of [id, `0${id}`, ` ${id}`, `${id}.0`, `+${id}`]) {
      expect((await c.signIn(spelling, wrong(0))).status, spelling).toBe(401);
    }
    // The sixth attempt, in any spelling, waits: the five failures were all this shop's.
    const next = await c.signIn(`00${id}`, shop.secret);
    expect(next.status).toBe(429);
    expect(next.body).toContain('Too many sign-in attempts');
  });

  it('makes one address wait longer after every failure on a shop, and forgets it on sign-in', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const id = String(shop.shop.id);
    const base = h.clock.now();
    const c = await client(h);
    for (let i = 0; i < SIGN_IN_LIMITS.freeFailures; i++)
      expect((await c.signIn(id, wrong(i))).status).toBe(401);

    let elapsed = 0;
    for (const waitS of [30, 60, 120]) {
      const early = await at(h, base, elapsed, () => c.signIn(id, shop.secret));
      expect(early.status).toBe(429);
      expect(early.retryAfter).toBe(waitS);
      // A second short of the wait, even the right key is not checked.
      elapsed += waitS * 1000;
      expect((await at(h, base, elapsed - 1000, () => c.signIn(id, shop.secret))).status).toBe(429);
      expect((await at(h, base, elapsed, () => c.signIn(id, wrong(waitS)))).status).toBe(401);
    }
    // Another shop from the same address is not held up.
    const other = await newShop(h);
    expect((await at(h, base, elapsed, () => c.signIn(String(other.shop.id), other.secret))).status).toBe(
      303,
    );
    // Nor is this shop from another address.
    const owner = await client(h);
    expect((await at(h, base, elapsed, () => owner.signIn(id, shop.secret))).status).toBe(303);

    // Once the wait is over the right key signs in, and the address starts afresh on the shop.
    elapsed += 240_000;
    expect((await at(h, base, elapsed, () => c.signIn(id, shop.secret))).status).toBe(303);
    expect((await at(h, base, elapsed, () => c.signIn(id, wrong(99)))).status).toBe(401);
  });

  it('lets the owner in from a clean address while a crowd of addresses guesses the shop', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const id = String(shop.shop.id);
    const crowd: Awaited<ReturnType<typeof client>>[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.perShop + 10; i++) {
      const c = await client(h);
      crowd.push(c);
      expect((await c.signIn(id, wrong(i))).status).toBe(401);
    }
    // Past the shop's limit an address that has failed is turned away, even with the right key…
    expect((await (crowd[0] as { signIn: (typeof crowd)[0]['signIn'] }).signIn(id, shop.secret)).status).toBe(
      429,
    );
    // …while one that has not may still try: a wrong key counts, and then it is turned away too…
    const newcomer = await client(h);
    expect((await newcomer.signIn(id, wrong(1000))).status).toBe(401);
    expect((await newcomer.signIn(id, shop.secret)).status).toBe(429);
    // …and the owner, from an address with no failures, signs in.
    const owner = await client(h);
    expect((await owner.signIn(id, shop.secret)).status).toBe(303);
  });

  it('counts values that are no shop id against the address', async () => {
    const h = await harness();
    const shop = await newShop(h);
    const c = await client(h);
    const junk = ['abc', '1e3', '0x4', '-4', '4.5', 'x'.repeat(100)];
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress; i++) {
      expect((await c.signIn(junk[i % junk.length] as string, wrong(i))).status).toBe(401);
    }
    expect((await c.signIn(String(shop.shop.id), shop.secret)).status).toBe(429);
  });

  it('gives an address back the attempts that signed in', async () => {
    const h = await harness();
    const shops: TestShop[] = [await newShop(h), await newShop(h)];
    const c = await client(h);
    for (let i = 0; i < SIGN_IN_LIMITS.perAddress + 5; i++) {
      const s = shops[i % 2] as TestShop;
      expect((await c.signIn(String(s.shop.id), s.secret)).status).toBe(303);
    }
  });
});
