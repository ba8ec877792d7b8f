import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { notificationMetrics } from '../../src/notifications/scheduler.js';
import { notifyShop, startReceiver } from './receiver.js';

/** What /metrics tells an operator about notifications: attempts by outcome and the backlog. */

const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe('notification metrics', () => {
  it('count attempts by outcome and show the pending backlog and the age of its oldest member', async () => {
    const down = await startReceiver(() => ({ status: 503 }));
    const s = await notifyShop();
    try {
      await s.subscribe(down.url);
      const registry = new Registry();
      const observer = notificationMetrics(registry, s.h.app.services);
      await s.deliver({ observer });
      // The test shop's clock moves an hour on: its waiting notifications are an hour old.
      expect((await s.api.post('/test_clock/advance', { by: 'PT1H' })).status).toBe(200);
      await s.deliver({ observer });
      const text = await registry.metrics();
      expect(text).toMatch(/^kopek_notification_attempts_total\{outcome="retry"\} 2$/m);
      expect(text).toMatch(/^kopek_notification_attempt_duration_seconds_count 2$/m);
      // Other tests' notifications share the store: at least this shop's two are waiting.
      expect(gauge(text, 'kopek_notifications_pending')).toBeGreaterThanOrEqual(2);
      expect(gauge(text, 'kopek_notifications_oldest_pending_seconds')).toBeGreaterThanOrEqual(3600);
    } finally {
      await down.close();
    }
  });
});
