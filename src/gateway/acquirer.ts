import {
  type AuthenticationStatus,
  AVS_CVC_OTHER,
  AVS_TEST_DATA,
  behaviourOf,
  CVC_TEST_DATA,
} from './test-cards.js';

/**
 * The sandbox acquirer: pure decisions from the card number and the facts of the request. Nothing
 * here touches the store or the clock, so every outcome is reproducible from the test-card table.
 */

/** The platform's sandbox words: its clients compare them (an authorization "was declined" as such). */
export const AcquirerMsg = {
  declined: 'Payment was declined',
  authorizationDeclined: 'Authorization was declined',
  insufficientFunds: 'Insufficient funds',
  providerError: 'Provider system error. Contact the payment service provider for details.',
  threeDsFailed: '3-D Secure authentication failed',
  /** The shop ended the step (it cancelled the subscription the charge was for). */
  cancelledByShop: 'This payment was cancelled by the shop',
  creditDeclined: 'Credit was declined',
  expired: 'Date is expired',
} as const;

export interface ChargeFacts {
  type: 'payment' | 'authorization';
  number: string;
  /** The shop has 3-D Secure on and the request did not ask to skip it. */
  threeDsActive: boolean;
  /** The shop already has a successful payment or authorization of this card (same stamp). */
  chargedBefore: boolean;
  /** A stored card (token) whose expiry month has passed since it was stored. */
  expired: boolean;
}

export type ThreeDsFlow = 'frictionless' | 'challenge';

export type Decision =
  | { outcome: 'successful' }
  | { outcome: 'failed'; message: string }
  | { outcome: 'error'; message: string }
  /** The acquirer does not answer within the client's timeout: the outcome is unknown for now. */
  | { outcome: 'timeout' }
  /** The cardholder must authenticate first (3-D Secure): the transaction waits at /process/{uid}. */
  | { outcome: 'incomplete'; flow: ThreeDsFlow; authentication: AuthenticationStatus };

/** A payment or an authorization. */
export function decideCharge(facts: ChargeFacts): Decision {
  if (facts.expired) return { outcome: 'failed', message: AcquirerMsg.expired };
  const behaviour = behaviourOf(facts.number);
  switch (behaviour.kind) {
    case 'approved':
      return { outcome: 'successful' };
    case 'declined':
      return {
        outcome: 'failed',
        message: facts.type === 'authorization' ? AcquirerMsg.authorizationDeclined : AcquirerMsg.declined,
      };
    case 'error':
      return { outcome: 'error', message: AcquirerMsg.providerError };
    case 'timeout':
      return { outcome: 'timeout' };
    case 'first_then_declined':
      return facts.chargedBefore
        ? { outcome: 'failed', message: AcquirerMsg.insufficientFunds }
        : { outcome: 'successful' };
    case 'three_ds':
      // Without 3-D Secure the enrolled cards are ordinary cards the issuer approves.
      return facts.threeDsActive
        ? { outcome: 'incomplete', flow: behaviour.flow, authentication: behaviour.authentication }
        : { outcome: 'successful' };
  }
}

/** A credit (a payout to the card): no 3-D Secure and no history, only the card's own answer. */
export function decideCredit(number: string, expired: boolean): Decision {
  if (expired) return { outcome: 'failed', message: AcquirerMsg.expired };
  const behaviour = behaviourOf(number);
  switch (behaviour.kind) {
    case 'declined':
      return { outcome: 'failed', message: AcquirerMsg.creditDeclined };
    case 'error':
      return { outcome: 'error', message: AcquirerMsg.providerError };
    case 'timeout':
      return { outcome: 'timeout' };
    default:
      return { outcome: 'successful' };
  }
}

export interface AvsCvcVerification {
  avs_verification: { result_code: string };
  cvc_verification: { result_code: string };
}

const firstDigit = (v: string | null | undefined) => v?.match(/\d/)?.[0];

/** AVS from the first digits of the billing address and zip, CVC from the code itself (test-cards.ts). */
export function avsCvcResult(
  address: string | null | undefined,
  zip: string | null | undefined,
  cvc: string | undefined,
): AvsCvcVerification {
  const a = firstDigit(address);
  const z = firstDigit(zip);
  const avs = AVS_TEST_DATA.find((row) => row.addressDigit === a && row.zipDigit === z)?.code;
  const cvcCode = CVC_TEST_DATA.find((row) => row.cvc === cvc)?.code;
  return {
    avs_verification: { result_code: avs ?? AVS_CVC_OTHER },
    cvc_verification: { result_code: cvcCode ?? AVS_CVC_OTHER },
  };
}

/** The platform's `three_d_secure_verification` object. */
export interface ThreeDSecureVerification {
  status: 'pending' | 'successful' | 'failed';
  message: string | null;
  ve_status: 'Y' | 'N';
  pa_status: AuthenticationStatus | null;
  eci: string | null;
  xid: string | null;
  cavv: string | null;
  cavv_algorithm: string | null;
  fail_reason: string | null;
}

const PA_MESSAGES: Record<AuthenticationStatus, string> = {
  Y: 'Authentication Successful',
  A: 'Authentication Attempted',
  U: 'Authentication Unavailable',
  R: 'Authentication Rejected',
  N: 'Authentication Failed',
};

const blankVerification = {
  eci: null,
  xid: null,
  cavv: null,
  cavv_algorithm: null,
  fail_reason: null,
};

export function notEnrolledVerification(): ThreeDSecureVerification {
  return {
    ...blankVerification,
    status: 'successful',
    message: 'Card is not enrolled in 3-D Secure',
    ve_status: 'N',
    pa_status: null,
    eci: '07',
  };
}

export function pendingVerification(): ThreeDSecureVerification {
  return { ...blankVerification, status: 'pending', message: null, ve_status: 'Y', pa_status: null };
}

// ECI values as the schemes define them: Visa 05/06/07, Mastercard 02/01/00.
function eciOf(pa: AuthenticationStatus, mastercard: boolean): string {
  if (pa === 'Y') return mastercard ? '02' : '05';
  if (pa === 'A') return mastercard ? '01' : '06';
  return mastercard ? '00' : '07';
}

/**
 * The end of the 3-D Secure step. `passed` means the cardholder went through it (for a frictionless
 * card there is nothing to pass: the card's own result applies); `failed` means the cardholder failed
 * or abandoned the challenge.
 */
export function finishAuthentication(
  authentication: AuthenticationStatus,
  outcome: 'passed' | 'failed',
  brand: string,
): { successful: boolean; verification: ThreeDSecureVerification } {
  const pa: AuthenticationStatus = outcome === 'failed' ? 'N' : authentication;
  const successful = pa === 'Y' || pa === 'A';
  return {
    successful,
    verification: {
      status: successful ? 'successful' : 'failed',
      message: PA_MESSAGES[pa],
      ve_status: 'Y',
      pa_status: pa,
      eci: eciOf(pa, brand === 'master'),
      xid: null,
      // A fixed sandbox value: real ones are issuer cryptograms, meaningless to a test shop.
      cavv: successful ? 'AAACAQJwJTd4hwE5SHAlEwAAAAA=' : null,
      cavv_algorithm: successful ? '2' : null,
      fail_reason: successful ? null : outcome === 'failed' ? 'Challenge failed' : PA_MESSAGES[pa],
    },
  };
}
