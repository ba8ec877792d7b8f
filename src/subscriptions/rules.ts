import { nextAttemptAt } from '../calendar/retry-schedule.js';
import type { Shop } from '../context.js';
import type { Rules } from './transitions.js';

/** The billing rules of one shop: when a failed renewal is tried again, by its settings. */
export function rulesFor(shop: Pick<Shop, 'timeZone' | 'retrySchedule' | 'quietHours'>): Rules {
  return {
    timeZone: shop.timeZone,
    retryAt: (outcome, failuresSoFar, failedAt) =>
      nextAttemptAt({
        outcome,
        failuresSoFar,
        failedAt,
        timeZone: shop.timeZone,
        schedule: shop.retrySchedule,
        quietHours: shop.quietHours,
      }),
  };
}
