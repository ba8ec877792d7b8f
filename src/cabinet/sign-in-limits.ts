import type { LimitStore } from '../limits/store.js';
import { MAX_SHOP_ID } from '../shops/index.js';

/**
 * How many wrong keys the cabinet's sign-in form takes, counted in the limit store that every
 * instance shares (PostgreSQL's cabinet_rate_limits, or Redis when REDIS_URL is set; memory on the
 * embedded store), with time from the injected clock:
 *
 * - per address: 20 attempts in a 15-minute window, then nothing until the window ends;
 * - per address and shop: 5 failures free, then each further attempt waits 30 s, doubling with every
 *   failure (1 min, 2 min … at most 1 hour); remembered for 24 hours after the last failure, and
 *   forgotten when that address signs in to that shop;
 * - per shop: past 50 failures in a 15-minute window, only an address with no failures at all in
 *   its window may still try a key, so a crowd of addresses cannot lock the owner out.
 *
 * Every spelling of one shop id (`4`, `04`, `+4`, `4.0`) counts for that shop; a value that is no
 * shop id at all counts for the address only.
 */
export const SIGN_IN_LIMITS = {
  windowMs: 15 * 60 * 1000,
  perAddress: 20,
  freeFailures: 5,
  firstDelayMs: 30 * 1000,
  maxDelayMs: 60 * 60 * 1000,
  pairMemoryMs: 24 * 60 * 60 * 1000,
  perShop: 50,
} as const;

const L = SIGN_IN_LIMITS;

/** The shop id a sign-in names, however it is spelled; undefined when it is no shop id at all. */
export function normalShopId(raw: string): number | undefined {
  const m = /^\+?0*(\d{1,10})(?:\.0*)?$/.exec(raw.trim());
  if (!m?.[1]) return undefined;
  const id = Number(m[1]);
  return id >= 1 && id <= MAX_SHOP_ID ? id : undefined;
}

/** How long the pair's next attempt waits after `failures` failures (0 while they are free). */
export function pairDelayMs(failures: number): number {
  if (failures < L.freeFailures) return 0;
  return Math.min(L.maxDelayMs, L.firstDelayMs * 2 ** Math.min(failures - L.freeFailures, 30));
}

const addressKey = (address: string) => `sign-in:ip:${address}`;
const shopKey = (shop: number) => `sign-in:shop:${shop}`;
const pairKey = (shop: number, address: string) => `sign-in:pair:${shop}:${address}`;

/** One attempt under way: it may check a key when waitMs is 0, and must then say how it went. */
export interface Attempt {
  waitMs: number;
  succeeded(): Promise<void>;
  failed(): Promise<void>;
}

/**
 * Starts an attempt. The address's count goes up before the key is checked, so attempts sent at
 * once cannot all slip under its limit; an attempt turned away, or one that succeeds, gives it back.
 * A fixed window keeps its end; the pair's memory moves to 24 hours after each failure.
 */
export async function beginSignIn(
  limits: LimitStore,
  address: string,
  shop: number | undefined,
  now: Date,
): Promise<Attempt> {
  const nowMs = now.getTime();
  const byAddress = await limits.add(addressKey(address), 1, now, new Date(nowMs + L.windowMs));
  const giveBack = () => limits.takeBack(addressKey(address));
  let waitMs = 0;
  if (byAddress.hits > L.perAddress) waitMs = byAddress.resetsMs - nowMs;
  else if (shop !== undefined) {
    const [pair, byShop] = await Promise.all([
      limits.read(pairKey(shop, address), now),
      limits.read(shopKey(shop), now),
    ]);
    if (pair) waitMs = pair.resetsMs - L.pairMemoryMs + pairDelayMs(pair.hits) - nowMs;
    // Past the shop's limit, only an address that has not failed may still try.
    const clean = byAddress.hits === 1 && !pair;
    if (byShop && byShop.hits >= L.perShop && !clean) waitMs = Math.max(waitMs, byShop.resetsMs - nowMs);
    if (waitMs > 0) await giveBack();
  }
  return {
    waitMs: Math.max(0, waitMs),
    async succeeded() {
      await giveBack();
      if (shop !== undefined) await limits.forget(pairKey(shop, address));
    },
    async failed() {
      if (shop === undefined) return;
      await Promise.all([
        limits.add(pairKey(shop, address), 1, now, new Date(nowMs + L.pairMemoryMs), { extend: true }),
        limits.add(shopKey(shop), 1, now, new Date(nowMs + L.windowMs)),
      ]);
    },
  };
}
