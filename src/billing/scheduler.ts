import { Counter, Histogram, type Registry } from 'prom-client';
import { backlogGauges } from '../backlog-metrics.js';
import type { Services } from '../context.js';
import { loop } from '../periodic.js';
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
  backlogGauges(
    registry,
    {
      count: ['kopek_billing_due', 'Subscriptions due now and not yet billed'],
      oldest: [
        'kopek_billing_oldest_due_seconds',
        'How long the oldest due subscription has waited: the billing lag',
      ],
    },
    async () => {
      const b = await dueBacklog(services.db, services.clock.now());
      return { count: b.due, oldestSeconds: b.oldestSeconds };
    },
  );
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
  return loop(everyMs, services.log, 'billing run', async () => {
    const s = await billDue(services, observer ? { observer } : {});
    if (s.charged + s.ended + s.resolved > 0) services.log.info({ billing: s }, 'billed what was due');
  });
}
