import { afterAll, describe, expect, it } from 'vitest';
import { JITTER, MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from '../../src/notifications/retry.js';
import { notifyShop, type Receiver, startReceiver } from './receiver.js';

const DAY = 86_400_000;
let rx: Receiver | undefined;
afterAll(() => rx?.close());

describe('the retry schedule', () => {
  it('retries within a minute first, then for at least three days over at least 16 attempts', () => {
    expect(MAX_ATTEMPTS).toBeGreaterThanOrEqual(16);
    // The shortest series (no jitter) still lasts three days; the first two retries come within a minute.
    const shortest = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(shortest).toBeGreaterThanOrEqual(3 * DAY);
    expect((retryDelayMs(1, 0.999) ?? 0) + (retryDelayMs(2, 0.999) ?? 0)).toBeLessThanOrEqual(60_000);
    // Growing delays, never shortened by jitter, at most a fifth longer.
    for (let n = 1; n < MAX_ATTEMPTS; n++) {
      const base = RETRY_DELAYS_MS[n - 1] as number;
      expect(retryDelayMs(n, 0)).toBe(base);
      expect(retryDelayMs(n, 0.999)).toBeLessThanOrEqual(base * (1 + JITTER));
      if (n > 1) expect(base).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[n - 2] as number);
    }
    expect(retryDelayMs(MAX_ATTEMPTS, 0.5)).toBeUndefined();
  });
});

describe('a receiver that stays down', () => {
  it('keeps the notification pending through every retry, then marks it failed; a resend delivers it', async () => {
    let down = true;
    rx = await startReceiver(() => (down ? { status: 0, reset: true } : { status: 200 }));
    const s = await notifyShop();
    const sub = await s.subscribe(rx.url);
    const created = (await s.api.get(`/notifications?resource_id=${sub}&event=created.subscription`)).body[0];

    // Each run makes the one attempt that is due; the test clock then moves to the next one.
    let view = created;
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await s.deliver();
      view = (await s.api.get(`/notifications/${created.id}`)).body;
      if (i < MAX_ATTEMPTS - 1) {
        expect(view).toMatchObject({ status: 'pending', attempt_count: i + 1 });
        const res = await s.api.post('/test_clock/advance', { to: view.next_attempt_at });
        expect(res.status, res.text).toBe(200);
      }
    }
    expect(view).toMatchObject({ status: 'failed', attempt_count: MAX_ATTEMPTS, next_attempt_at: null });
    const at = (view.attempts as { at: string; error: string }[]).map((a) => Date.parse(a.at));
    expect(at.at(-1)! - at[0]!).toBeGreaterThanOrEqual(3 * DAY);
    expect(at[1]! - at[0]!).toBeLessThanOrEqual(60_000);
    for (const a of view.attempts) expect(a).toMatchObject({ status_code: null, response: null });
    expect(view.attempts[0].error).toMatch(/ECONNRESET|socket hang up|other side closed/);
    expect(rx.received).toHaveLength(MAX_ATTEMPTS + 1);
    // Once `created` has failed, the next event of the subscription is no longer held back.
    const [activated] = (await s.api.get(`/notifications?resource_id=${sub}&event=activated.subscription`))
      .body;
    expect(activated).toMatchObject({ status: 'pending', attempt_count: 1 });

    down = false;
    const resent = await s.api.post(`/notifications/${created.id}/resend`);
    expect(resent.status, resent.text).toBe(200);
    expect(resent.body).toMatchObject({ status: 'pending', attempt_count: MAX_ATTEMPTS });
    expect(resent.body.attempts).toHaveLength(MAX_ATTEMPTS);
    // Due at once; a new series, so a failure now would be retried by the whole schedule again.
    expect(await s.deliver()).toMatchObject({ attempts: 1, delivered: 1 });
    const done = (await s.api.get(`/notifications/${created.id}`)).body;
    expect(done).toMatchObject({ status: 'delivered', attempt_count: MAX_ATTEMPTS + 1 });
    expect(done.attempts.at(-1)).toMatchObject({ n: MAX_ATTEMPTS + 1, status_code: 200, error: null });
  });
});
