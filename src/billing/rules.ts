import type { Shop } from '../shops/repository.js';
import type { Rules } from '../subscriptions/transitions.js';
import { nextAttemptAt } from './retry-schedule.js';

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
