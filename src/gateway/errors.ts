/**
 * The acquirer did not answer within the client's time: the charge may or may not have happened.
 * Never charge again on this error. Resolve it by querying the gateway by `trackingId` (or `uid`
 * when known): a pending transaction is still unknown (ask again later); a successful one is paid;
 * only a failed one, or none at all, may be charged again.
 */
export class GatewayTimeout extends Error {
  override readonly name = 'GatewayTimeout';
  constructor(
    /** The gateway's uid of the transaction, when the client learned it (in-process it always does). */
    readonly uid: string | undefined,
    readonly trackingId: string | null,
  ) {
    super(
      'The acquirer did not answer in time; the outcome is unknown. Query the transaction by tracking_id before charging again',
    );
  }
}

/**
 * The gateway is still processing an earlier request sent with the same idempotency key (HTTP 409):
 * not an answer, and above all not a refusal, so nothing may be failed or canceled on it. The outcome
 * is unknown for now: send again later with the same key (the gateway then replays the first
 * request's answer), or query by `trackingId`.
 */
export class GatewayInFlight extends Error {
  override readonly name = 'GatewayInFlight';
  constructor(
    readonly idempotencyKey: string,
    readonly trackingId: string | null,
  ) {
    super(
      'The gateway is still processing a request with this idempotency key; its outcome is not known yet',
    );
  }
}
