import type { Services } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { TransactionStatus } from '../ledger/index.js';
import {
  completeThreeDSecure,
  type ThreeDSecureStep,
  type ThreeDsOutcome,
  threeDSecureStep,
} from './three-ds.js';

/**
 * What follows a finished 3-D Secure step outside the gateway: the composition root hands in the
 * settling of the subscription whose charge it was (the gateway knows no subscription).
 */
export type AfterThreeDs = (services: Services, uid: string) => Promise<void>;

/** The options of the routes that finish a step (process-page.tsx, three-ds-return.ts). */
export interface ThreeDsRouteOptions {
  afterThreeDs?: AfterThreeDs;
}

/**
 * Finishes the cardholder's 3-D Secure step with their answer, for the page the browser posts to and
 * for the shop's server posting the answer back (`/process/{uid}/return`) alike:
 *
 * - a frictionless step always completes as passed: the card, not the cardholder, decides; the
 *   shop ending the step (`cancelled`: its subscription was cancelled) fails it whatever the card;
 * - a step already finished (a double click, a retried request) changes nothing: the answer is the
 *   status the first one left;
 * - then `after` settles the subscription whose charge it was. Should that fail, the payment's
 *   result stands, and the subscription settles on its next read or billing run instead.
 */
export async function finishThreeDSecureStep(
  services: Services,
  step: ThreeDSecureStep,
  outcome: ThreeDsOutcome,
  after: AfterThreeDs | undefined,
): Promise<TransactionStatus> {
  let status = step.status;
  if (status === 'incomplete') {
    try {
      // The shop's end of a step stands whatever the card; otherwise a frictionless card decides.
      const chosen = step.flow === 'frictionless' && outcome !== 'cancelled' ? 'passed' : outcome;
      status = (await completeThreeDSecure(services, step.uid, chosen)).transaction.status;
    } catch (err) {
      // Another request completed it first.
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err;
      status = (await threeDSecureStep(services, step.uid))?.status ?? status;
    }
  }
  try {
    await after?.(services, step.uid);
  } catch (err) {
    services.log.error({ err, uid: step.uid }, 'could not settle the subscription after 3-D Secure');
  }
  return status;
}
