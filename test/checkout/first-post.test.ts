import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { answering, waitForFirst } from '../../src/checkout/first-post.js';

/**
 * A second post of one checkout form waits for the first: at once when the first is answered in this
 * process, at the next read of the store when another instance answered it, and never beyond its limit.
 */

const elapsed = async (wait: Promise<void>) => {
  const start = performance.now();
  await wait;
  return performance.now() - start;
};

describe('a second post of one form', () => {
  it('goes on as soon as the first is answered in this process, without waiting for its next read', async () => {
    let paid = false;
    let reads = 0;
    const settled = async () => {
      reads++;
      return paid;
    };
    // Reads 10 s apart: only the answer can end this wait well within them.
    const waiting = waitForFirst('tok_a', settled, { stepMs: 10_000, limitMs: 10_000 });
    const first = answering('tok_a', async () => {
      await new Promise((r) => setTimeout(r, 50));
      paid = true;
      return 'done';
    });
    expect(await first).toBe('done');
    expect(await elapsed(waiting)).toBeLessThan(5_000);
    expect(reads).toBe(2);
  }, 20_000);

  it('is not woken by the answer to another form', async () => {
    let reads = 0;
    const waiting = waitForFirst(
      'tok_b',
      async () => {
        reads++;
        return false;
      },
      { stepMs: 60_000, limitMs: 300 },
    );
    await answering('tok_other', async () => undefined);
    await waiting;
    // Only the first read: the other form's answer woke nothing, and the limit ends the wait unread.
    expect(reads).toBe(1);
  });

  it('still sees a first post answered by another instance, at a read of the store', async () => {
    let reads = 0;
    // Another instance answers: nothing tells this one, the third read sees it.
    const settled = async () => ++reads >= 3;
    await waitForFirst('tok_c', settled, { stepMs: 10, limitMs: 60_000 });
    expect(reads).toBe(3);
  });

  it('shows the state as it is once its limit has passed', async () => {
    let reads = 0;
    const took = await elapsed(
      waitForFirst(
        'tok_d',
        async () => {
          reads++;
          return false;
        },
        { stepMs: 20, limitMs: 200 },
      ),
    );
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(5_000);
    expect(reads).toBeGreaterThan(2);
  });

  it('wakes the waiting posts even when the first post failed', async () => {
    let done = false;
    const waiting = waitForFirst('tok_e', async () => done, { stepMs: 10_000, limitMs: 10_000 });
    await expect(
      answering('tok_e', async () => {
        done = true;
        throw new Error('store gone');
      }),
    ).rejects.toThrow('store gone');
    expect(await elapsed(waiting)).toBeLessThan(5_000);
  }, 20_000);
});
