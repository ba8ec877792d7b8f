import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import {
  ALREADY_VOIDED,
  type ChargeRequest,
  GatewayInFlight,
  GatewayTimeout,
  type KnownCards,
  type PlannedPayment,
  type TransactionAnswer,
} from '../gateway/index.js';
import { type GatewayClient, gatewayClient } from '../gateway/money.js';
import type { Sent } from './answers.js';

/**
 * The only place a subscription's charge meets the gateway. `send` makes the call, never inside a
 * transaction (a remote gateway is refused there: RemoteCallInTransaction), and turns every
 * way it can end into a `Sent`; it never throws for the gateway's sake, so no caller can mistake a
 * silence for a refusal or the other way round.
 */

export interface SendOptions {
  /** The gateway idempotency key of the attempt (requests.ts: chargeGatewayKey for a subscription's). */
  idempotencyKey?: string;
  /** The gateway transaction: a payment, or an authorization (a product's, a card verification's). */
  type?: 'payment' | 'authorization';
  /** For the log: whose charge it is (a subscription, a product order). */
  owner: Record<string, string>;
  /**
   * The client to send with, when the caller was handed one (the checkout API's tries take theirs
   * from `checkoutGateway`, or a test's); else the deployment's.
   */
  client?: GatewayClient;
}

/**
 * Sends a payment. A refusal of the request (422 and the like) charged nothing; a timeout, a gateway
 * still busy with the same key (409) or a failure without an answer leave the outcome unknown: the
 * attempt is then resolved by query (attempt.ts: resolveAttempt), never charged again blindly.
 */
export async function send(ctx: Ctx, request: ChargeRequest, options: SendOptions): Promise<Sent> {
  // Never inside a transaction: a remote call there would hold it open across the network, and a
  // crash after the gateway charged would roll back Kopek's record of the charge (RemoteCallInTransaction).
  const gateway = options.client ?? gatewayClient(ctx, { outsideTransaction: true });
  try {
    const keyed = options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : undefined;
    const answer =
      options.type === 'authorization'
        ? await gateway.authorization(request, keyed)
        : await gateway.payment(request, keyed);
    return { kind: 'answered', answer };
  } catch (err) {
    if (err instanceof GatewayTimeout) {
      const pending = err.uid ? await gateway.query(err.uid).catch(() => undefined) : undefined;
      return { kind: 'unknown', uid: err.uid, pending, cause: err };
    }
    if (err instanceof GatewayInFlight) {
      ctx.log.warn(
        { ...options.owner, tracking_id: request.tracking_id },
        'the gateway is still processing this charge; its outcome is resolved by query',
      );
      return { kind: 'unknown', uid: undefined, pending: undefined, cause: err };
    }
    if (options.idempotencyKey && err instanceof ApiError && isKeyReused(err)) {
      // The gateway holds another request under this attempt's key: whatever it did with that one is
      // this attempt's outcome, so it is asked about, never taken for a refusal.
      ctx.log.error(
        { ...options.owner, tracking_id: request.tracking_id },
        'the gateway holds another request under this charge key; its outcome is resolved by query',
      );
      return { kind: 'unknown', uid: undefined, pending: undefined, cause: err };
    }
    if (err instanceof ApiError) {
      ctx.log.warn({ ...options.owner, errors: err.errors }, 'the gateway refused a charge');
      return { kind: 'refused', message: err.message, error: err };
    }
    ctx.log.error(
      { err, ...options.owner, tracking_id: request.tracking_id },
      'a charge failed without an answer; its outcome is resolved by query',
    );
    return { kind: 'unknown', uid: undefined, pending: undefined, cause: err };
  }
}

/** The gateway's 422 for a key used before with another request (http/idempotency/keys.ts). */
function isKeyReused(err: ApiError): boolean {
  return err.code === 'validation' && Array.isArray(err.errors.idempotency_key);
}

/**
 * With the gateway in this process, decides a payment without writing it: the caller writes the
 * payment's statement in the same batch as its own rows. Undefined when it cannot be planned (a
 * remote gateway, a card whose outcome depends on its history) or the gateway refuses the request:
 * then the attempt goes through `send`, which records the refusal as it should.
 */
export async function plan(
  ctx: Ctx,
  request: ChargeRequest,
  known?: KnownCards,
): Promise<PlannedPayment | undefined> {
  if (ctx.config.gatewayRemote) return undefined;
  const gateway = gatewayClient(ctx);
  if (!gateway.planPayment) return undefined;
  try {
    return await gateway.planPayment(request, known);
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

/** The transaction of `uid` (an open attempt's), or undefined when the gateway has none. */
export function queryCharge(ctx: Ctx, uid: string) {
  return gatewayClient(ctx).query(uid);
}

/** The payment (or a verification's authorization) sent under an attempt's tracking id, if any. */
export async function queryChargeByTrackingId(ctx: Ctx, trackingId: string) {
  const found = await gatewayClient(ctx).queryByTrackingId(trackingId);
  return found.find((t) => t.type === 'payment' || t.type === 'authorization');
}

/**
 * A successful authorization of a card verification is released (voided) before its outcome is
 * recorded, so no crash can leave a hold on the cardholder's card behind a recorded verification:
 * whoever records it (the request, the 3-D Secure return, a query after a crash) releases it first,
 * under one gateway idempotency key, and a second release finds it released already. A gateway that
 * cannot release it now leaves the hold to lapse at the acquirer; the verification stands.
 */
export async function releaseVerification(ctx: Ctx, answer: TransactionAnswer, subscriptionId: string) {
  if (answer.type !== 'authorization' || answer.status !== 'successful') return;
  const gateway = gatewayClient(ctx, { outsideTransaction: true });
  try {
    await gateway.void(
      { parent_uid: answer.uid },
      { idempotencyKey: `kopek-verification-void:${answer.uid}` },
    );
  } catch (err) {
    // In process and over HTTP alike, the refusal names it in `base`.
    const base = err instanceof ApiError ? err.errors.base : undefined;
    if (Array.isArray(base) && base.includes(ALREADY_VOIDED)) return;
    ctx.log.error(
      { err, subscription: subscriptionId, uid: answer.uid },
      'the authorization of a card verification could not be released; it lapses at the acquirer',
    );
  }
}

/**
 * Ends the open 3-D Secure step of an attempt whose subscription was cancelled: the gateway fails the
 * transaction ("This payment was cancelled by the shop"), and a page still open for it can no longer
 * complete it. Resolves with the transaction as the gateway now has it (a step the cardholder ended
 * first keeps its outcome).
 */
export function endThreeDSecureStep(ctx: Ctx, uid: string): Promise<TransactionAnswer | undefined> {
  return gatewayClient(ctx, { outsideTransaction: true }).endThreeDSecure(uid);
}

/** Why money taken after a cancel is given back, as the refund says. */
export const REFUND_REASON = 'The subscription was cancelled before this payment completed';

/**
 * Refunds a payment taken after its subscription was cancelled, under the attempt's own refund
 * tracking id and gateway idempotency key: the gateway is asked first, so a refund made by a run
 * that died before recording it is found, never made twice.
 */
export async function refundCharge(
  ctx: Ctx,
  payment: { uid: string; amount: number },
  trackingId: string,
  idempotencyKey: string,
): Promise<TransactionAnswer> {
  const gateway = gatewayClient(ctx, { outsideTransaction: true });
  const earlier = (await gateway.queryByTrackingId(trackingId)).find(
    (t) => t.type === 'refund' && t.status === 'successful',
  );
  if (earlier) return earlier;
  return gateway.refund(
    {
      parent_uid: payment.uid,
      amount: payment.amount,
      reason: REFUND_REASON,
      tracking_id: trackingId,
      duplicate_check: false,
    },
    { idempotencyKey },
  );
}

/** What a shop does with a transaction it has: capture or void an authorization, refund a payment. */
export type MoneyAction = 'capture' | 'void' | 'refund';

export interface MoneyActionRequest {
  parent_uid: string;
  /** Minor units; a void without one releases the whole authorization. */
  amount?: number;
  /** A refund's reason. */
  reason?: string;
}

/**
 * Captures, voids or refunds a transaction for the shop (the cabinet's actions) through the gateway
 * the deployment is configured with, in process or on its own server, under `idempotencyKey`: a
 * resend of the same action (a retried form) is answered by the gateway, never done twice. Never
 * inside a transaction. A refusal rejects with the gateway's ApiError, as the API answers it.
 */
export function sendMoneyAction(
  ctx: Ctx,
  action: MoneyAction,
  request: MoneyActionRequest,
  idempotencyKey: string,
): Promise<TransactionAnswer> {
  const gateway = gatewayClient(ctx, { outsideTransaction: true });
  const options = { idempotencyKey };
  const { parent_uid } = request;
  if (action === 'capture') return gateway.capture({ parent_uid, amount: request.amount ?? 0 }, options);
  if (action === 'void')
    return gateway.void(
      { parent_uid, ...(request.amount !== undefined ? { amount: request.amount } : {}) },
      options,
    );
  return gateway.refund({ parent_uid, amount: request.amount ?? 0, reason: request.reason ?? '' }, options);
}

/** Every transaction the gateway has under `trackingId`, newest first (a product order's, say). */
export function transactionsByTrackingId(ctx: Ctx, trackingId: string): Promise<TransactionAnswer[]> {
  return gatewayClient(ctx).queryByTrackingId(trackingId);
}

/** The card's record from the gateway's vault: a full card gets a new token, a token is looked up. */
export function tokenizeCard(ctx: Ctx, request: Parameters<GatewayClient['tokenize']>[0]) {
  return gatewayClient(ctx).tokenize(request);
}

/**
 * The gateway client of the deployment, for the checkout API's tries (src/checkout/api/pay.ts),
 * which claim and record a try in their own rows and send it through `send` with this client (a
 * test hands them one that fails on purpose instead), and ask about a try by uid or tracking id.
 */
export function checkoutGateway(ctx: Ctx): GatewayClient {
  return gatewayClient(ctx);
}
export type { GatewayClient };
