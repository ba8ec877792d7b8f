import { afterQuietHours, nextAttemptAt } from '../calendar/retry-schedule.js';
import type { Shop } from '../context.js';
import type { Rules } from './transitions.js';

/**
 * The billing rules of one shop: when a failed renewal is tried again, by its settings, read in the
 * zone of the subscription it is applied to.
 */
export function rulesFor(shop: Pick<Shop, 'retrySchedule' | 'quietHours'>): Rules {
  return {
    retryAt: (outcome, failuresSoFar, failedAt, timeZone) =>
      nextAttemptAt({
        outcome,
        failuresSoFar,
        failedAt,
        timeZone,
        schedule: shop.retrySchedule,
        quietHours: shop.quietHours,
      }),
  };
}

/**
 * When a charge of a subscription in `timeZone` that falls due at `at` inside the shop's quiet hours
 * (read on the subscription's clock) may be made: their end; undefined when `at` is outside them. No
 * renewal, first attempt or retry, is charged inside them.
 */
export function quietUntil(shop: Pick<Shop, 'quietHours'>, at: Date, timeZone: string): Date | undefined {
  if (!shop.quietHours) return undefined;
  const end = afterQuietHours(at, shop.quietHours, timeZone);
  return end.getTime() > at.getTime() ? end : undefined;
}
