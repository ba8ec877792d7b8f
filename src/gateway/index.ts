/**
 * The gateway's face: what other features may use of it. Charging, the subscriptions' card vaulting
 * and the checkout pages call the gateway client (in process or over HTTP), with its request and
 * answer types (billing reads a planned payment's), the errors of a call in flight or timed out and
 * the answer of a void already done; the product page checks its request as the gateway API would
 * and ends a 3-D Secure step it abandons; the cabinet's payments pages read a transaction; the
 * checkout API and proofs answer errors in the gateway's shape; the hosted pages translate the acquirer's and the charge's messages. The money verbs themselves
 * (payment, authorization, capture, void, refund) are called through the client by the charging
 * module only (test/architecture/money-verbs.test.ts). Nothing else of `gateway/` is for use outside
 * it (the composition root aside).
 */
export { AcquirerMsg } from './acquirer.js';
export { PROCESSED, type TransactionAnswer } from './answer.js';
export type { KnownCards } from './card-source.js';
export { ChargeMsg } from './charge.js';
export {
  ALREADY_VOIDED,
  type AvsCvcRequest,
  type CardRequest,
  type ChargeRequest,
  GatewayInFlight,
  GatewayTimeout,
  type PlannedPayment,
} from './client.js';
export { gatewayErrorBody, isNotFound, NOT_FOUND } from './error-body.js';
export { parseCharge } from './input.js';
export { getTransaction } from './query.js';
export { GatewayError, gatewayErrors } from './schemas.js';
export { completeThreeDSecure } from './three-ds.js';
