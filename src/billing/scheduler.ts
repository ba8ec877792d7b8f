import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Services } from '../context.js';
import { type BillingObserver, billDue } from './renew.js';
import { dueBacklog } from './repository.js';

/**
 * Billing's metrics: charge attempts by outcome and how long they took, and the due backlog with the
 * age of its oldest member (the billing lag), read from the store when scraped.
 */
export function billingMetrics(
  registry: Registry,
  services: Pick<Services, 'db' | 'clock'>,
): BillingObserver {
  const attempts = new Counter({
    name: 'kopek_billing_charges_total',
    help: 'Renewal charge attempts by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kopek_billing_charge_duration_seconds',
    help: 'Time to take and record one renewal charge attempt',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
    registers: [registry],
  });
  let backlog: Promise<{ due: number; oldestSeconds: number }> | undefined;
  // One store query per scrape serves both gauges.
  const read = () => {
    backlog ??= dueBacklog(services.db, services.clock.now()).finally(() => {
      setTimeout(() => {
        backlog = undefined;
      }, 1000).unref();
    });
    return backlog;
  };
  new Gauge({
    name: 'kopek_billing_due',
    help: 'Subscriptions due now and not yet billed',
    registers: [registry],
    async collect() {
      this.set((await read()).due);
    },
  });
  new Gauge({
    name: 'kopek_billing_oldest_due_seconds',
    help: 'How long the oldest due subscription has waited: the billing lag',
    registers: [registry],
    async collect() {
      this.set((await read()).oldestSeconds);
    },
  });
  return {
    attempt(outcome, seconds) {
      attempts.labels(outcome).inc();
      duration.observe(seconds);
    },
  };
}

/**
 * Runs the billing engine inside `kopek serve`: every `everyMs`, everything due is billed. Runs never
 * overlap within a process; other instances take disjoint work (SKIP LOCKED). Returns a stop function
 * that resolves once a run in progress has finished.
 */
export function startBilling(
  services: Services,
  everyMs: number,
  observer?: BillingObserver,
): () => Promise<void> {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    current = billDue(services, observer ? { observer } : {})
      .then((s) => {
        if (s.charged + s.ended + s.resolved > 0) services.log.info({ billing: s }, 'billed what was due');
      })
      .catch((err: unknown) => services.log.error({ err }, 'billing run failed; trying again shortly'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  timer = setTimeout(tick, 0);
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await current;
  };
}
