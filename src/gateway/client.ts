import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { gatewayServiceSecret } from '../crypto/service-credential.js';
import type { KnownCards } from './card-source.js';
import { authorize, credit, pay, planPayment } from './charge.js';
import { ChildMsg, capture, refund, voidAuthorization } from './children.js';
import type {
  CaptureRequest,
  ChargeRequest,
  CreditRequest,
  GatewayClient,
  RefundRequest,
  TokenizeRequest,
  VoidRequest,
} from './client-types.js';
import { HttpGatewayClient } from './http-client.js';
import { getTransaction, transactionsByTrackingId } from './query.js';
import { threeDSecureStep, UID } from './three-ds.js';
import { finishThreeDSecureStep } from './three-ds-finish.js';
import { tokenize } from './tokenize.js';

export type { CardRecord } from '../cards/index.js';
export type { TransactionAnswer } from './answer.js';
export type { PlannedPayment } from './charge.js';
export type {
  AvsCvcRequest,
  CaptureRequest,
  CardRequest,
  ChargeRequest,
  CreditRequest,
  GatewayClient,
  RefundRequest,
  SendOptions,
  TokenizeRequest,
  VoidRequest,
} from './client-types.js';
export { GatewayInFlight, GatewayTimeout } from './errors.js';

/** The gateway's refusal of a void whose authorization was voided before: the release happened. */
export const ALREADY_VOIDED = ChildMsg.alreadyVoided;

const wire = (request: object) => ({ request: JSON.parse(JSON.stringify(request)) as unknown });

export class InProcessGatewayClient implements GatewayClient {
  constructor(private readonly ctx: Ctx) {}

  payment(request: ChargeRequest) {
    return pay(this.ctx, wire(request));
  }
  planPayment(request: ChargeRequest, known?: KnownCards) {
    return planPayment(this.ctx, wire(request), known);
  }
  authorization(request: ChargeRequest) {
    return authorize(this.ctx, wire(request));
  }
  capture(request: CaptureRequest) {
    return capture(this.ctx, wire(request));
  }
  void(request: VoidRequest) {
    return voidAuthorization(this.ctx, wire(request));
  }
  refund(request: RefundRequest) {
    return refund(this.ctx, wire(request));
  }
  credit(request: CreditRequest) {
    return credit(this.ctx, wire(request));
  }
  tokenize(request: TokenizeRequest) {
    return tokenize(this.ctx, wire(request));
  }
  async query(uid: string) {
    try {
      return await getTransaction(this.ctx, uid);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return undefined;
      throw err;
    }
  }
  queryByTrackingId(trackingId: string) {
    return transactionsByTrackingId(this.ctx, trackingId);
  }
  async endThreeDSecure(uid: string) {
    const step = UID.test(uid) ? await threeDSecureStep(this.ctx, uid) : undefined;
    if (!step || step.shopId !== this.ctx.shop.id) return undefined;
    await finishThreeDSecureStep(this.ctx, step, 'cancelled', undefined);
    return this.query(uid);
  }
}

/**
 * A call to a gateway on another server was asked for while the caller's store is a transaction view
 * (`dbWithin`): the transaction would stay open for the whole round trip, and what the gateway did
 * would not be recorded until it commits, or not at all should the process die first. Charge in
 * steps instead: commit the claim, call the gateway with no transaction open, then record.
 */
export class RemoteCallInTransaction extends Error {
  override readonly name = 'RemoteCallInTransaction';
  constructor() {
    super('a remote gateway call must not be made inside a transaction; commit the claim first');
  }
}

export interface GatewayClientOptions {
  /**
   * Refuse (RemoteCallInTransaction) to make a remote client when `ctx.db` is a transaction view.
   * On by default for a keyed request in the phased mode (`ctx.keyed`), which holds no transaction
   * of its own, so a view there is one the verb opened. Off otherwise for now: the atomic mode still
   * runs keyed routes inside its held transaction, and POST /subscriptions calls a remote gateway
   * from there until it turns phased (docs/redesign-plan.md, increment 8b).
   */
  outsideTransaction?: boolean;
}

/**
 * The gateway client for a shop. In-process unless GATEWAY_URL names another server
 * (`config.gatewayRemote`): then over HTTP, as the shop, with the credential both deployments derive
 * from GATEWAY_TOKEN (service-credential.ts; loadConfig requires the token in that case).
 */
export function gatewayClient(ctx: Ctx, options: GatewayClientOptions = {}): GatewayClient {
  if (!ctx.config.gatewayRemote) return new InProcessGatewayClient(ctx);
  const outside = options.outsideTransaction ?? ctx.keyed !== undefined;
  if (outside && ctx.db.insideTransaction) throw new RemoteCallInTransaction();
  const token = ctx.config.gatewayToken;
  if (!token) throw new Error('GATEWAY_URL names another server, so GATEWAY_TOKEN must be set');
  return new HttpGatewayClient({
    url: ctx.config.gatewayUrl,
    shopId: ctx.shop.id,
    secret: gatewayServiceSecret(token, ctx.shop.id),
  });
}
