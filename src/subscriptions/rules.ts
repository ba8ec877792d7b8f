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
 * When a charge of a subscription in `timeZone` that falls due at `at` may be made: `at`, or the end
 * of the shop's quiet hours it falls in (read on the subscription's clock). No renewal, first attempt
 * or retry, is charged inside them.
 */
export function chargeableAt(shop: Pick<Shop, 'quietHours'>, at: Date, timeZone: string): Date {
  return shop.quietHours ? afterQuietHours(at, shop.quietHours, timeZone) : at;
}
