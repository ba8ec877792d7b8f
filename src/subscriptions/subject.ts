import type { AttemptRef, ChargeEvent, ChargeSubject } from '../charging/index.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../db/db.js';
import { findPlanOfShop, type Plan } from '../plans/index.js';
import { lockSubscription, type SubscriptionRow } from './repository.js';
import { rulesFor } from './rules.js';
import { applyTransition, changeInstant } from './state.js';
import { transition } from './transitions.js';

/**
 * A subscription as the subject of its charges (charging/attempt.ts): locked by id, moved by the
 * state machine (`transition`) and written by the one writer (`applyTransition`), on its shop's rules
 * and clock. The one place where a charge's event becomes subscription state. Without `plan`, the
 * locked subscription's plan is read when an event is applied, and only then: asking the gateway
 * about an attempt that is still open costs no read. A plan the store lacks leaves the subscription
 * and its attempt as they are.
 */
export function subscriptionSubject(ctx: Ctx, id: string, plan?: Plan): ChargeSubject<SubscriptionRow> {
  return {
    id,
    lock: (tx: Tx) => lockSubscription(tx, ctx.shop.id, id),
    charged: (locked) => locked.cancelled_at === null,
    async apply(tx, locked, event: ChargeEvent, attempt: AttemptRef & { uid: string | null }) {
      const p = plan ?? (await findPlanOfShop(ctx, locked.plan_id, tx));
      if (!p) return locked;
      const now = changeInstant(locked, ctx.clock.now());
      const t = transition(locked, p, event, now, rulesFor(ctx.shop));
      return applyTransition(tx, locked, p, t, now, attempt);
    },
  };
}
