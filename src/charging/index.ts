/**
 * The charging module's face: what other features may use of it. A charge attempt's life (plan,
 * claim, send, read, record, resolve) is written here once; its subject (a subscription) passes
 * itself in through `ChargeSubject`, so charging imports no feature above it.
 */
export {
  type ChargeEvent,
  type ChargeOutcome,
  eventOf,
  outcomeOf,
  outcomeWord,
  plannedEventOf,
  type Sent,
  summarize,
  type TransactionSummary,
} from './answers.js';
export {
  type AttemptRef,
  type ChargeSubject,
  endAttempt,
  type Resolution,
  type ResolveOptions,
  recordAttempt,
  recordPlannedAttempt,
  refundAttempt,
  refundTrackingId,
  resolveAttempt,
  resumeAttempt,
  type Taken,
  takeAttempt,
} from './attempt.js';
export {
  answeredChargeInsert,
  type ChargeAnswer,
  type ChargeClaim,
  type ChargeRow,
  chargeClaimInsert,
  chargeClaimsInsert,
  chargesRecord,
  claimCharge,
  endOpenAttempts,
  lockOpenCharge,
  lockPendingAttempts,
  openCharge,
  reversalsDue,
  touchOpenAttempt,
} from './repository.js';
export {
  type ChargedSubscription,
  type ChargeKind,
  cardRequest,
  chargeDescription,
  chargeGatewayKey,
  chargeTrackingId,
  firstChargeRequest,
  renewalRequest,
  returnUrlWithId,
  storedCardRequest,
} from './requests.js';
export {
  checkoutGateway,
  type GatewayClient,
  type MoneyAction,
  type MoneyActionRequest,
  plan as planCharge,
  queryCharge,
  type SendOptions,
  send as sendCharge,
  sendMoneyAction,
  tokenizeCard,
  transactionsByTrackingId,
} from './send.js';
