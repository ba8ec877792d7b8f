import type { CardRecord } from '../cards/index.js';
import type { TransactionAnswer } from './answer.js';
import type { KnownCards } from './card-source.js';
import type { PlannedPayment } from './charge.js';
import type { BillingAddress, Customer } from './input.js';

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
 * - sent with an idempotency key that an earlier request still holds (HTTP 409): rejects with
 *   `GatewayInFlight`, which is no answer at all, and never a refusal;
 * - a processed transaction, whatever its status (successful, failed, incomplete, error, pending),
 *   resolves: the caller reads `status`, `message` and, for `incomplete`, `redirect_url`.
 */
export interface GatewayClient {
  payment(request: ChargeRequest, options?: SendOptions): Promise<TransactionAnswer>;
  authorization(request: ChargeRequest, options?: SendOptions): Promise<TransactionAnswer>;
  capture(request: CaptureRequest, options?: SendOptions): Promise<TransactionAnswer>;
  void(request: VoidRequest, options?: SendOptions): Promise<TransactionAnswer>;
  refund(request: RefundRequest, options?: SendOptions): Promise<TransactionAnswer>;
  credit(request: CreditRequest, options?: SendOptions): Promise<TransactionAnswer>;
  /** `POST /credit_cards`: a new token for a full card, or new holder/expiry for an existing token. */
  tokenize(request: TokenizeRequest, options?: SendOptions): Promise<CardRecord>;
  /**
   * Ends the open 3-D Secure step of the shop's transaction `uid` for the shop (`POST
   * /process/{uid}/return` with `outcome: cancelled`): the transaction fails, saying the shop
   * cancelled it, and a page still open for it can no longer complete it. A step that ended already
   * is left as it is. Resolves with the transaction as it now is; undefined when the shop has none.
   */
  endThreeDSecure(uid: string): Promise<TransactionAnswer | undefined>;
  /** `GET /transactions/{uid}`; undefined when the shop has no such transaction. */
  query(uid: string): Promise<TransactionAnswer | undefined>;
  /** `GET /v2/transactions/tracking_id/{id}`: the 10 newest matches, newest first; empty when none. */
  queryByTrackingId(trackingId: string): Promise<TransactionAnswer[]>;
  /**
   * Only a gateway in this process, on this store, has it: decides a payment (with a full card, which
   * it then stores, or a token) and returns the statement that records it, for the caller to commit
   * in one batch with its own rows. Undefined when the payment cannot be planned; then use payment().
   * Requests it refuses reject as payment() would.
   */
  planPayment?(request: ChargeRequest, known?: KnownCards): Promise<PlannedPayment | undefined>;
}

/** How a request that changes something is sent. */
export interface SendOptions {
  /**
   * Over HTTP, sent as the Idempotency-Key header: the gateway answers a resend with the same key
   * and request with its first answer for 24 hours (a 504 too, so a resend never charges again), and
   * with 409 while the first is still being processed, which rejects with GatewayInFlight. Unused
   * in-process, where a call cannot be lost on the way and is never resent.
   */
  idempotencyKey?: string;
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

/** Calls the gateway's verbs directly, as the shop of `ctx`. The default. */
