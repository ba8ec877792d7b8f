import { Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { billDue } from '../../src/billing/renew.js';
import { billingMetrics } from '../../src/billing/scheduler.js';
import { ManualClock } from '../../src/clock.js';
import { client, type Harness, harness, newShop } from '../harness.js';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});

const value = async (registry: Registry, name: string, labels?: Record<string, string>) => {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const sample = metric?.values.find((v) =>
    Object.entries(labels ?? {}).every(([k, l]) => (v.labels as Record<string, string>)[k] === l),
  );
  return sample?.value;
};

describe('billing metrics', () => {
  it('show the due backlog with its lag, and count charge attempts by outcome', async () => {
    const shop = await newShop(h);
    const api = client(h, shop);
    const before = h.clock.now();
    try {
      h.clock.set('2026-02-01T09:00:00.000Z');
      const created = await api.post('/subscriptions', {
        plan: { title: 'Gold', currency: 'EUR', plan: { amount: 1999, interval: 1, interval_unit: 'hour' } },
        customer: { email: 'jane@example.com', ip: '203.0.113.7' },
        card: {
          number: '4200000000000000',
          verification_value: '123',
          holder: 'JANE DOE',
          exp_month: '12',
          exp_year: '2035',
        },
      });
      expect(created.status).toBe(201);
      // Seen from two hours later: due for an hour at least (the store may hold others' too).
      const registry = new Registry();
      const later = new ManualClock('2026-02-01T11:00:00.000Z');
      const observer = billingMetrics(registry, { db: h.db, clock: later });
      expect(await value(registry, 'kopek_billing_due')).toBeGreaterThanOrEqual(1);
      expect(await value(registry, 'kopek_billing_oldest_due_seconds')).toBeGreaterThanOrEqual(3600);

      h.clock.set('2026-02-01T10:00:00.000Z');
      const services = { db: h.db, clock: h.clock, config: h.config, masterKey: h.masterKey, log: h.app.log };
      const run = await billDue(services, { shopId: shop.shop.id, observer });
      expect(run.successful).toBe(1);
      expect(await value(registry, 'kopek_billing_charges_total', { outcome: 'successful' })).toBe(1);
    } finally {
      h.clock.set(before);
    }
  });
});
