import type { AttemptRef, ChargeEvent, ChargeSubject } from '../charging/index.js';
import type { Ctx } from '../context.js';
import type { Tx } from '../db/db.js';
import type { Plan } from '../plans/service.js';
import { lockSubscription, type SubscriptionRow } from './repository.js';
import { rulesFor } from './rules.js';
import { applyTransition } from './state.js';
import { transition } from './transitions.js';

/**
 * A subscription as the subject of its charges (charging/attempt.ts): locked by id, moved by the
 * state machine (`transition`) and written by the one writer (`applyTransition`), on its shop's rules
 * and clock. The one place where a charge's event becomes subscription state.
 */
export function subscriptionSubject(
  ctx: Pick<Ctx, 'shop' | 'clock'>,
  id: string,
  plan: Plan,
): ChargeSubject<SubscriptionRow> {
  return {
    id,
    lock: (tx: Tx) => lockSubscription(tx, ctx.shop.id, id),
    charged: (locked) => locked.cancelled_at === null,
    apply(tx, locked, event: ChargeEvent, attempt: AttemptRef & { uid: string | null }) {
      const now = ctx.clock.now();
      const t = transition(locked, plan, event, now, rulesFor(ctx.shop));
      return applyTransition(tx, locked, plan, t, now, attempt);
    },
  };
}
