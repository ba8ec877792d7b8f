import type { CardRecord } from '../cards/index.js';
import type { Services } from '../context.js';
import { ApiError } from '../core/errors.js';
import { findTransactionByUid, lockTransactionByUid, type TransactionRow } from '../ledger/index.js';
import { AcquirerMsg, finishAuthentication, type ThreeDsFlow } from './acquirer.js';
import { changeAnnounced } from './announce.js';
import { type GatewayType, PROCESSED, sectionFor, type TransactionAnswer, toAnswer } from './answer.js';
import type { AuthenticationStatus } from './test-cards.js';

/**
 * The cardholder's 3-D Secure step, for the page at `{gatewayUrl}/process/{uid}`. These verbs take no
 * shop: the cardholder's browser arrives without the shop's credentials, and the (unguessable) uid of
 * an incomplete transaction is the reference, as on the platform.
 *
 * The page: GET /process/{uid} calls `threeDSecureStep`; for `flow: 'frictionless'` it completes at
 * once with 'passed' (no challenge to show); for `flow: 'challenge'` it shows the challenge and calls
 * `completeThreeDSecure` with the cardholder's result; then it redirects to `returnUrl` (when set).
 */

export type GatewayServices = Pick<Services, 'db' | 'clock' | 'config'>;

export interface ThreeDSecureStep {
  uid: string;
  shopId: number;
  type: GatewayType;
  /** Only `incomplete` transactions wait for the cardholder; any other status is final already. */
  status: TransactionRow['status'];
  /** Whether the shop ended the step (it cancelled the subscription the payment was for). */
  cancelledByShop: boolean;
  flow: ThreeDsFlow;
  amount: number;
  currency: string;
  description: string | null;
  language: string | null;
  card: { brand: string; last_4: string } | null;
  /** The request's `return_url`: where the cardholder goes afterwards (null: the shop's own URL). */
  returnUrl: string | null;
  /** A test transaction: its page says that nothing real is charged. */
  test: boolean;
}

interface ThreeDsPlan {
  flow: ThreeDsFlow;
  authentication: AuthenticationStatus;
}

const planOf = (row: TransactionRow) => row.details.three_ds as ThreeDsPlan | undefined;

/** A transaction uid's form: anything else names no transaction (and would upset the uuid column). */
export const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the page shows; undefined for an unknown uid or a transaction that never had a 3-D Secure step. */
export async function threeDSecureStep(
  services: GatewayServices,
  uid: string,
): Promise<ThreeDSecureStep | undefined> {
  const row = await findTransactionByUid(services.db, uid);
  const plan = row && planOf(row);
  if (!row || !plan) return undefined;
  const card = row.card as CardRecord | null;
  return {
    uid: row.uid,
    shopId: row.shop_id,
    type: row.type as GatewayType,
    status: row.status,
    cancelledByShop: row.status === 'failed' && row.message === AcquirerMsg.cancelledByShop,
    flow: plan.flow,
    amount: row.amount,
    currency: row.currency,
    description: row.description,
    language: row.language,
    card: card ? { brand: card.brand, last_4: card.last_4 } : null,
    returnUrl: row.return_url,
    test: row.test,
  };
}

export interface ThreeDSecureResult {
  transaction: TransactionAnswer;
  shopId: number;
  returnUrl: string | null;
}

export const ThreeDsMsg = {
  notWaiting: (status: string) => `Transaction is not waiting for 3-D Secure authentication: it is ${status}`,
} as const;

/** How a 3-D Secure step ends: the cardholder's answer, or the shop ending it (`cancelled`). */
export type ThreeDsOutcome = 'passed' | 'failed' | 'cancelled';

/**
 * Finishes the 3-D Secure step of an incomplete payment or authorization. `passed`: the cardholder
 * went through it, and the card's own authentication result applies (successful for Y and A, failed
 * for U, R, N); `failed`: the cardholder failed or abandoned the challenge, the transaction fails;
 * `cancelled`: the shop ended it (its subscription was cancelled), the transaction fails saying so.
 * The new status is announced in the same transaction. Unknown uid: 404; a transaction not (or no
 * longer) waiting: 409, nothing changes and nothing is announced.
 */
export async function completeThreeDSecure(
  services: GatewayServices,
  uid: string,
  outcome: ThreeDsOutcome,
): Promise<ThreeDSecureResult> {
  const now = services.clock.now();
  const row = await services.db.tx(async (tx) => {
    const locked = await lockTransactionByUid(tx, uid);
    const plan = locked && planOf(locked);
    if (!locked || !plan) throw ApiError.notFound();
    if (locked.status !== 'incomplete') throw ApiError.base('conflict', ThreeDsMsg.notWaiting(locked.status));
    const type = locked.type as GatewayType;
    const brand = (locked.card as CardRecord | null)?.brand ?? 'unknown';
    const cancelled = outcome === 'cancelled';
    const { successful, verification } = finishAuthentication(
      plan.authentication,
      cancelled ? 'failed' : outcome,
      brand,
    );
    const threeDSecure = verification as unknown as Record<string, unknown>;
    if (successful && !cancelled) {
      return changeAnnounced(
        tx,
        uid,
        {
          status: 'successful',
          message: PROCESSED,
          paidAt: type === 'payment' ? now : null,
          threeDSecure,
          details: { section: sectionFor(type, 'successful', null) },
        },
        now,
        services.config.gatewayUrl,
      );
    }
    return changeAnnounced(
      tx,
      uid,
      {
        status: 'failed',
        message: cancelled ? AcquirerMsg.cancelledByShop : AcquirerMsg.threeDsFailed,
        threeDSecure,
        details: {
          section: sectionFor(
            type,
            'failed',
            cancelled ? AcquirerMsg.cancelledByShop : AcquirerMsg.threeDsFailed,
            false,
          ),
        },
      },
      now,
      services.config.gatewayUrl,
    );
  });
  return {
    transaction: toAnswer(row, services.config.gatewayUrl),
    shopId: row.shop_id,
    returnUrl: row.return_url,
  };
}
