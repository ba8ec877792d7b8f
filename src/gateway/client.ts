import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { gatewayServiceSecret } from '../crypto/service-credential.js';
import type { KnownCards } from './card-source.js';
import { authorize, credit, pay, planPayment } from './charge.js';
import { capture, refund, voidAuthorization } from './children.js';
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
import { tokenize } from './tokenize.js';

export type { CardRecord } from '../cards/vault.js';
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
  TokenizeRequest,
  VoidRequest,
} from './client-types.js';
export { GatewayTimeout } from './errors.js';

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
}

/**
 * The gateway client for a shop. In-process unless GATEWAY_URL names another server
 * (`config.gatewayRemote`): then over HTTP, as the shop, with the credential both deployments derive
 * from GATEWAY_TOKEN (service-credential.ts; loadConfig requires the token in that case).
 */
export function gatewayClient(ctx: Ctx): GatewayClient {
  if (!ctx.config.gatewayRemote) return new InProcessGatewayClient(ctx);
  const token = ctx.config.gatewayToken;
  if (!token) throw new Error('GATEWAY_URL names another server, so GATEWAY_TOKEN must be set');
  return new HttpGatewayClient({
    url: ctx.config.gatewayUrl,
    shopId: ctx.shop.id,
    secret: gatewayServiceSecret(token, ctx.shop.id),
  });
}
