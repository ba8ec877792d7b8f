/**
 * The sandbox acquirer's test data, as one table the README lists. Cards marked `platform` are the
 * platform's documented test cards (docs.bepaid.by "Test card data"); cards marked `kopek` are Kopek's
 * own, for outcomes the platform's list does not cover. Any other valid card number is approved.
 * Expiry: any date not yet past; CVC: any 3 or 4 digits (see CVC_TEST_DATA for the verification code).
 */

/** 3-D Secure authentication status (the platform's `pa_status`). */
export type AuthenticationStatus = 'Y' | 'A' | 'U' | 'R' | 'N';

export type CardBehaviour =
  | { kind: 'approved' }
  | { kind: 'declined' }
  | { kind: 'error' }
  | { kind: 'first_then_declined' }
  | { kind: 'timeout' }
  /** Enrolled in 3-D Secure: matters only for shops with 3-D Secure on; elsewhere the card is approved. */
  | { kind: 'three_ds'; flow: 'frictionless' | 'challenge'; authentication: AuthenticationStatus };

export interface TestCard {
  number: string;
  source: 'platform' | 'kopek';
  behaviour: CardBehaviour;
  /** What happens, in the words the README uses. */
  outcome: string;
}

const frictionless = (authentication: AuthenticationStatus): CardBehaviour => ({
  kind: 'three_ds',
  flow: 'frictionless',
  authentication,
});
const challenge: CardBehaviour = { kind: 'three_ds', flow: 'challenge', authentication: 'Y' };

const THREE_DS_OUTCOME = {
  Y: '3-D Secure frictionless (Y): successful',
  A: '3-D Secure frictionless, attempted (A): successful',
  U: '3-D Secure unavailable (U): failed',
  R: '3-D Secure rejected (R): failed',
  N: '3-D Secure not authenticated (N): failed',
  challenge: '3-D Secure challenge (Y): successful when the challenge is passed, failed otherwise',
} as const;

export const TEST_CARDS: readonly TestCard[] = [
  { number: '4200000000000000', source: 'platform', behaviour: { kind: 'approved' }, outcome: 'successful' },
  {
    number: '4005550000000019',
    source: 'platform',
    behaviour: { kind: 'declined' },
    outcome: 'failed, "Payment was declined" (an authorization: "Authorization was declined")',
  },
  {
    number: '4012000000001006',
    source: 'platform',
    behaviour: frictionless('Y'),
    outcome: THREE_DS_OUTCOME.Y,
  },
  {
    number: '4012000000001055',
    source: 'platform',
    behaviour: frictionless('A'),
    outcome: THREE_DS_OUTCOME.A,
  },
  {
    number: '4012000000001097',
    source: 'platform',
    behaviour: challenge,
    outcome: THREE_DS_OUTCOME.challenge,
  },
  {
    number: '4012000000001022',
    source: 'platform',
    behaviour: frictionless('U'),
    outcome: THREE_DS_OUTCOME.U,
  },
  {
    number: '4012000000001030',
    source: 'platform',
    behaviour: frictionless('R'),
    outcome: THREE_DS_OUTCOME.R,
  },
  {
    number: '4012000000001014',
    source: 'platform',
    behaviour: frictionless('N'),
    outcome: THREE_DS_OUTCOME.N,
  },
  {
    number: '4012000000003010',
    source: 'platform',
    behaviour: challenge,
    outcome: THREE_DS_OUTCOME.challenge,
  },
  {
    number: '5204240000015003',
    source: 'platform',
    behaviour: frictionless('Y'),
    outcome: THREE_DS_OUTCOME.Y,
  },
  {
    number: '5204240000015011',
    source: 'platform',
    behaviour: frictionless('A'),
    outcome: THREE_DS_OUTCOME.A,
  },
  {
    number: '5204240000015029',
    source: 'platform',
    behaviour: challenge,
    outcome: THREE_DS_OUTCOME.challenge,
  },
  {
    number: '5204240000015045',
    source: 'platform',
    behaviour: frictionless('U'),
    outcome: THREE_DS_OUTCOME.U,
  },
  {
    number: '5204240000015052',
    source: 'platform',
    behaviour: frictionless('R'),
    outcome: THREE_DS_OUTCOME.R,
  },
  {
    number: '5204240000015060',
    source: 'platform',
    behaviour: frictionless('N'),
    outcome: THREE_DS_OUTCOME.N,
  },
  {
    number: '4000000000000119',
    source: 'kopek',
    behaviour: { kind: 'error' },
    outcome: 'error, "Provider system error. Contact the payment service provider for details."',
  },
  {
    number: '4000000000000226',
    source: 'kopek',
    behaviour: { kind: 'first_then_declined' },
    outcome:
      'the first payment or authorization of the card in a shop is successful; every later one fails with "Insufficient funds" (for testing renewals)',
  },
  {
    number: '4000000000000333',
    source: 'kopek',
    behaviour: { kind: 'timeout' },
    outcome:
      'the acquirer does not answer in time: the transaction stays pending, the in-process client throws GatewayTimeout and HTTP answers 504; the acquirer\'s late answer ("successful") is seen by queries from 60 seconds after the charge (shop clock)',
  },
];

/** The Kopek cards by purpose, for tests and documentation. */
export const KOPEK_CARDS = {
  error: '4000000000000119',
  firstThenDeclined: '4000000000000226',
  timeout: '4000000000000333',
} as const;

/** How long the timeout card's acquirer takes to answer, on the shop's clock. */
export const LATE_ANSWER_MS = 60_000;

const BY_NUMBER = new Map(TEST_CARDS.map((c) => [c.number, c]));

export function behaviourOf(number: string): CardBehaviour {
  return BY_NUMBER.get(number)?.behaviour ?? { kind: 'approved' };
}

/**
 * AVS test data (the platform's): the first digit of `billing_address.address` and the first digit of
 * `billing_address.zip` choose the AVS result code; any other pair, or a missing one, gives `1`.
 */
export const AVS_TEST_DATA: readonly { addressDigit: string; zipDigit: string; code: string }[] = [
  { addressDigit: '1', zipDigit: '1', code: 'M' },
  { addressDigit: '2', zipDigit: '2', code: 'N' },
  { addressDigit: '1', zipDigit: '2', code: 'B' },
  { addressDigit: '2', zipDigit: '1', code: 'P' },
  { addressDigit: '3', zipDigit: '3', code: 'U' },
  { addressDigit: '4', zipDigit: '4', code: 'E' },
  { addressDigit: '5', zipDigit: '5', code: '0' },
];

/** CVC test data (the platform's): these CVCs give these CVC result codes; any other CVC, or none, gives `1`. */
export const CVC_TEST_DATA: readonly { cvc: string; code: string }[] = [
  { cvc: '111', code: 'M' },
  { cvc: '222', code: 'N' },
  { cvc: '333', code: 'U' },
  { cvc: '444', code: 'E' },
  { cvc: '555', code: '0' },
];

/** The result code of any combination not in the tables: "not supported". */
export const AVS_CVC_OTHER = '1';
