import { Counter, Histogram, type Registry } from 'prom-client';
import { backlogGauges } from '../backlog-metrics.js';
import type { Services } from '../context.js';
import type { DeliveryObserver } from './attempt.js';
import { DeliveryPool } from './deliver.js';
import { pendingBacklog } from './repository.js';
import type { DeliveryWake } from './wake.js';

/**
 * Notifications' metrics: attempts by outcome and how long they took, and the notifications still
 * waiting with the age of the oldest (how far behind delivery is), read from the store when scraped.
 */
export function notificationMetrics(
  registry: Registry,
  services: Pick<Services, 'db' | 'clock'>,
): DeliveryObserver {
  const attempts = new Counter({
    name: 'kopek_notification_attempts_total',
    help: 'Notification delivery attempts by outcome: delivered, retry (failed, tried again later), failed (the last attempt)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'kopek_notification_attempt_duration_seconds',
    help: "Time a notification's receiver took to answer (or to fail)",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  backlogGauges(
    registry,
    {
      count: ['kopek_notifications_pending', 'Notifications not yet delivered that will be tried (again)'],
      oldest: [
        'kopek_notifications_oldest_pending_seconds',
        'How long the oldest notification not yet delivered has waited since its event',
      ],
    },
    async () => {
      const b = await pendingBacklog(services.db, services.clock.now());
      return { count: b.pending, oldestSeconds: b.oldestSeconds };
    },
  );
  return {
    attempt(outcome, seconds) {
      attempts.labels(outcome).inc();
      duration.observe(seconds);
    },
  };
}

/** After a wake, how long the deliverer waits for more before it looks: a look serves them all. */
export const WAKE_DELAY_MS = 20;

/**
 * Delivers notifications inside `kopek serve`: every `everyMs`, at once whenever a delivery
 * finishes (a slot is free, and the next event of its resource may now go), and WAKE_DELAY_MS after
 * `wake` says this process committed a notification due now, due notifications are claimed into the
 * free slots. Other instances take other notifications (SKIP LOCKED). Returns a stop function that
 * resolves once the deliveries on their way have finished.
 */
export function startDelivery(
  services: Services,
  everyMs: number,
  observer?: DeliveryObserver,
  wake?: DeliveryWake,
): () => Promise<void> {
  const pool = new DeliveryPool(services, observer ? { observer } : {});
  let stopped = false;
  let filling: Promise<void> | undefined;
  let again = false;
  const pump = () => {
    if (stopped) return;
    if (filling) {
      again = true;
      return;
    }
    filling = pool
      .fill()
      .then(() => undefined)
      .catch((err: unknown) =>
        services.log.error({ err }, 'claiming notifications failed; trying again shortly'),
      )
      .finally(() => {
        filling = undefined;
        if (again) {
          again = false;
          pump();
        }
      });
  };
  pool.onSettled = pump;
  const timer = setInterval(pump, everyMs);
  timer.unref();
  let woken: NodeJS.Timeout | undefined;
  const stopListening = wake?.on(() => {
    if (stopped || woken) return;
    woken = setTimeout(() => {
      woken = undefined;
      pump();
    }, WAKE_DELAY_MS);
    woken.unref();
  });
  pump();
  return async () => {
    stopped = true;
    stopListening?.();
    clearTimeout(woken);
    clearInterval(timer);
    await filling;
    await pool.drain();
  };
}
