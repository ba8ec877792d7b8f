import type { CardRecord } from '../cards/vault.js';
import type { Ctx } from '../context.js';
import { ApiError } from '../core/errors.js';
import type { TransactionAnswer } from './answer.js';
import type { KnownCards } from './card-source.js';
import { authorize, credit, type PlannedPayment, pay, planPayment } from './charge.js';
import { capture, refund, voidAuthorization } from './children.js';
import { HttpGatewayClient } from './http-client.js';
import type { BillingAddress, Customer } from './input.js';
import { getTransaction, transactionsByTrackingId } from './query.js';
import { gatewayServiceSecret } from './service-credential.js';
import { tokenize } from './tokenize.js';

export type { CardRecord } from '../cards/vault.js';
export type { TransactionAnswer } from './answer.js';
export type { PlannedPayment } from './charge.js';
export { GatewayTimeout } from './errors.js';

/**
 * The one way features (subscriptions, products, checkout) move money on cards. Requests and answers
 * are the protocol's JSON (`request` contents in, `transaction` contents out), so an HTTP
 * implementation against GATEWAY_URL only has to wrap them in `{"request": ...}`, unwrap
 * `{"transaction": ...}` and map errors:
 *
 * - invalid request or a refused operation (HTTP 422 `{"response": {message, errors}}`): rejects with
 *   `ApiError` of code `validation` carrying `errors` (keys as in the request: `credit_card.number`);
 * - unknown or another shop's parent_uid (HTTP 404): rejects with `ApiError` of code `not_found`;
 * - no answer in time (an HTTP client timeout, or HTTP 504): rejects with `GatewayTimeout`. The outcome
 *   is unknown: query by tracking_id before charging again (see GatewayTimeout);
 * - a processed transaction, whatever its status (successful, failed, incomplete, error, pending),
 *   resolves: the caller reads `status`, `message` and, for `incomplete`, `redirect_url`.
 */
export interface GatewayClient {
  payment(request: ChargeRequest): Promise<TransactionAnswer>;
  authorization(request: ChargeRequest): Promise<TransactionAnswer>;
  capture(request: CaptureRequest): Promise<TransactionAnswer>;
  void(request: VoidRequest): Promise<TransactionAnswer>;
  refund(request: RefundRequest): Promise<TransactionAnswer>;
  credit(request: CreditRequest): Promise<TransactionAnswer>;
  /** `POST /credit_cards`: a new token for a full card, or new holder/expiry for an existing token. */
  tokenize(request: TokenizeRequest): Promise<CardRecord>;
  /** `GET /transactions/{uid}`; undefined when the shop has no such transaction. */
  query(uid: string): Promise<TransactionAnswer | undefined>;
  /** `GET /v2/transactions/tracking_id/{id}`: every match, the first first; empty when none. */
  queryByTrackingId(trackingId: string): Promise<TransactionAnswer[]>;
  /**
   * Only a gateway in this process, on this store, has it: decides a payment (with a full card, which
   * it then stores, or a token) and returns the statement that records it, for the caller to commit
   * in one batch with its own rows. Undefined when the payment cannot be planned; then use payment().
   * Requests it refuses reject as payment() would.
   */
  planPayment?(request: ChargeRequest, known?: KnownCards): Promise<PlannedPayment | undefined>;
}

/** `credit_card` of a request: the full card, or a token (with the CVC when the cardholder gave it). */
export interface CardRequest {
  number?: string;
  verification_value?: string;
  holder?: string;
  exp_month?: string;
  exp_year?: string;
  token?: string;
  skip_three_d_secure_verification?: boolean;
}

export interface AvsCvcRequest {
  avs_verification?: { skip_verification?: boolean; rejection_codes?: string[] };
  cvc_verification?: { skip_verification?: boolean; rejection_codes?: string[] };
}

export interface ChargeRequest {
  /** Minor units, > 0. */
  amount: number;
  currency: string;
  description: string;
  /** Send one, unique per charge attempt: it is how an unknown outcome (GatewayTimeout) is resolved. */
  tracking_id?: string;
  language?: string;
  /** Where the cardholder returns after a 3-D Secure step. */
  return_url?: string;
  notification_url?: string;
  test?: boolean;
  /** Default true: the same card, amount, currency and tracking_id within 30 s is declined as a duplicate. */
  duplicate_check?: boolean;
  credit_card: CardRequest;
  customer?: Partial<Customer>;
  billing_address?: Partial<BillingAddress>;
  additional_data?: Record<string, unknown>;
  avs_cvc_verification?: AvsCvcRequest;
}

export type CreditRequest = Omit<ChargeRequest, 'duplicate_check' | 'avs_cvc_verification' | 'return_url'>;

export interface CaptureRequest {
  parent_uid: string;
  amount: number;
  tracking_id?: string;
}

export interface VoidRequest {
  parent_uid: string;
  /** Defaults to the authorized amount. */
  amount?: number;
  tracking_id?: string;
}

export interface RefundRequest {
  parent_uid: string;
  amount: number;
  reason: string;
  tracking_id?: string;
  /** Default true: the same parent and amount within 30 s is declined as a duplicate. */
  duplicate_check?: boolean;
}

export interface TokenizeRequest {
  number?: string;
  holder?: string;
  exp_month?: string;
  exp_year?: string;
  token?: string;
}

// The verbs see exactly what they would see over HTTP: JSON, with undefined members gone.
const wire = (request: object) => ({ request: JSON.parse(JSON.stringify(request)) as unknown });

/** Calls the gateway's verbs directly, as the shop of `ctx`. The default. */
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
