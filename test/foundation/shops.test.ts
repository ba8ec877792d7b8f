import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { harness, newShop } from '../harness.js';

describe('shop ids', () => {
  it('never hands out an id twice while shops with chosen ids are created alongside others', async () => {
    const h = await harness();
    // Chosen ids far apart, so only the sequence handling can make two shops meet.
    const base = randomInt(1_000_000, 100_000_000);
    const created = await Promise.all(
      Array.from({ length: 40 }, (_, i) => newShop(h, i % 4 === 0 ? { id: base + i * 10_000_000 } : {})),
    );
    const ids = created.map((c) => c.shop.id);
    expect(new Set(ids).size).toBe(ids.length);
    // A shop created afterwards without an id gets one above every chosen id.
    const after = await newShop(h);
    expect(after.shop.id).toBeGreaterThan(Math.max(...ids));
  });

  it('does not move the sequence back for a chosen id below it', async () => {
    const h = await harness();
    const high = await newShop(h, { id: randomInt(1_500_000_000, 1_600_000_000) });
    const low = await newShop(h, { id: randomInt(1_000_000, 2_000_000) });
    const next = await newShop(h);
    expect(low.shop.id).toBeLessThan(high.shop.id);
    expect(next.shop.id).toBeGreaterThan(high.shop.id);
  });
});
