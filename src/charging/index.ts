/**
 * The charging module's face: what other features may use of it. Today only the record of each
 * charge attempt (subscription_charges); the rest of a charge's life moves here in later steps of
 * docs/redesign-plan.md (part C).
 */
export {
  answeredChargeInsert,
  type ChargeAnswer,
  type ChargeClaim,
  type ChargeRow,
  chargeClaimInsert,
  chargeClaimsInsert,
  chargesRecord,
  claimCharge,
  lockOpenCharge,
  lockPendingAttempts,
  openCharge,
} from './repository.js';
