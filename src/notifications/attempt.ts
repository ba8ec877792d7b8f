import { createPrivateKey, type KeyObject } from 'node:crypto';
import type { Services } from '../context.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import { shopSecret, signingKeyOf } from '../shops/service.js';
import type { OutcomeWriter } from './outcomes.js';
import { type Outcome, postNotification } from './post.js';
import type { DueRow, Next } from './queue.js';
import { retryDelayMs } from './retry.js';
import { processSigner } from './signer.js';

/** One attempt at one notification: signed, sent, and its outcome recorded. */

export const SEND_TIMEOUT_MS = 10_000;

export interface DeliveryLimits {
  /** Deliveries on their way at once in this process. */
  total: number;
  /** ... of which one shop may hold at most this many. */
  perShop: number;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface DeliveryObserver {
  attempt?(outcome: AttemptOutcome, seconds: number): void;
}

export interface Summary {
  attempts: number;
  delivered: number;
  /** Attempts that failed and wait for another. */
  retrying: number;
  /** Notifications that used their last attempt. */
  failed: number;
}

export interface AttemptOptions {
  /** Records the outcome; it resolves once committed. */
  outcomes: OutcomeWriter;
  observer?: DeliveryObserver;
  timeoutMs?: number;
  random?: () => number;
}

/** Header names: the event id lets a receiver ignore a notification it already has. */
export const EVENT_ID_HEADER = 'Kopek-Event-Id';
export const TIMESTAMP_HEADER = 'Kopek-Timestamp';

/** The notification's id as the API and the event id header show it. */
export const notificationId = (eventId: number) => `evt_${eventId}`;

/** The exact bytes sent; the signature covers them. */
export const notificationBody = (row: Pick<DueRow, 'payload'>) => JSON.stringify(row.payload);

/** Shops whose opened keys a process keeps (about 2 KB each); beyond, the oldest is dropped. */
const KEYS_KEPT = 1000;

/**
 * A bounded map, per keyring (another master key opens nothing of what it holds). Found by the sealed
 * text: re-sealed under a new master key, a value is opened once more and its old entry ages out.
 */
class KeptPerMasterKey<V> {
  readonly #byMaster = new WeakMap<object, Map<string, V>>();

  get(masterKey: MasterKeys, sealed: string, open: () => V): V {
    const ring = keyringOf(masterKey);
    let kept = this.#byMaster.get(ring);
    if (!kept) {
      kept = new Map();
      this.#byMaster.set(ring, kept);
    }
    let value = kept.get(sealed);
    if (value === undefined) {
      value = open();
      if (kept.size >= KEYS_KEPT) {
        const oldest = kept.keys().next().value;
        if (oldest !== undefined) kept.delete(oldest);
      }
      kept.set(sealed, value);
    }
    return value;
  }
}

const signingKeys = new KeptPerMasterKey<KeyObject>();
const authorizations = new KeptPerMasterKey<string>();

/**
 * The shop's signing key, opened and parsed once per process: parsing the PEM took longer than the
 * signature itself (about 0.55 of 0.85 ms on the 2-core machine). Found by the sealed text, so a shop
 * given a new key (sealed anew) is never signed for with its old one.
 */
const signingKeyObject = (masterKey: MasterKeys, row: Pick<DueRow, 'private_key_enc'>): KeyObject =>
  signingKeys.get(masterKey, row.private_key_enc, () => createPrivateKey(signingKeyOf(masterKey, row)));

/**
 * The Authorization header of the shop's notifications, its secret opened once per process (a key
 * derivation and an AES-GCM decryption, 4 % of a deliverer's time when done for every one). Found
 * by the shop and its sealed secret, so a rotated key is used as soon as a claim reads it.
 */
const authorizationOf = (
  masterKey: MasterKeys,
  row: Pick<DueRow, 'shop_id' | 'secret_enc'>,
  sealed: string,
) =>
  authorizations.get(
    masterKey,
    `${row.shop_id}:${sealed}`,
    () => `Basic ${Buffer.from(`${row.shop_id}:${shopSecret(masterKey, row)}`).toString('base64')}`,
  );

async function headersFor(
  services: Services,
  row: DueRow,
  body: string,
  at: Date,
): Promise<Record<string, string>> {
  // RSA-SHA256 over the exact bytes sent (PKCS #1 v1.5, as createSign('RSA-SHA256') makes it).
  const key = signingKeyObject(services.masterKey, row);
  const authorization =
    row.secret_enc === null ? undefined : authorizationOf(services.masterKey, row, row.secret_enc);
  const signature = await processSigner(services.config.notifySigningThreads).sign(key, body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Kopek-Notifications/1',
    'content-signature': signature,
    [EVENT_ID_HEADER.toLowerCase()]: notificationId(row.id),
    [TIMESTAMP_HEADER.toLowerCase()]: String(Math.floor(at.getTime() / 1000)),
  };
  // A shop created before Kopek kept its key sealed gets its notifications without Basic until
  // it is given a new key (kopek shop rotate-key).
  if (authorization !== undefined) headers.authorization = authorization;
  return headers;
}

async function send(services: Services, row: DueRow, at: Date, timeoutMs: number): Promise<Outcome> {
  let headers: Record<string, string>;
  const body = notificationBody(row);
  try {
    headers = await headersFor(services, row, body, at);
  } catch {
    // A master key other than the one the shop's keys were sealed with: nothing can be signed.
    return { statusCode: null, durationMs: 0, response: null, error: "the shop's keys cannot be opened" };
  }
  return postNotification({
    url: row.url,
    body,
    headers,
    allowPrivate: row.test || services.config.notifyAllowPrivate,
    timeoutMs,
  });
}

const shopNow = (services: Services, row: DueRow) =>
  new Date(services.clock.now().getTime() + row.clock_offset_ms);

export async function deliverOne(
  services: Services,
  row: DueRow,
  summary: Summary,
  opts: AttemptOptions,
): Promise<void> {
  // The claim took this attempt's number.
  const n = row.attempts;
  const at = shopNow(services, row);
  const outcome = await send(services, row, at, opts.timeoutMs ?? SEND_TIMEOUT_MS);
  const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  let next: Next = { kind: 'delivered' };
  if (!ok) {
    const delay = retryDelayMs(n - row.series_from, (opts.random ?? Math.random)());
    next =
      delay === undefined
        ? { kind: 'failed' }
        : { kind: 'retry', at: new Date(shopNow(services, row).getTime() + delay) };
  }
  const record = { eventId: row.id, n, seriesFrom: row.series_from, at, ...outcome };
  await opts.outcomes.record(record, next);
  const kind = next.kind;
  summary.attempts += 1;
  if (kind === 'delivered') summary.delivered += 1;
  else if (kind === 'retry') summary.retrying += 1;
  else summary.failed += 1;
  opts.observer?.attempt?.(kind, outcome.durationMs / 1000);
  // The shop and event say which; never the URL (it may carry the shop's own token) nor headers.
  const fields = {
    shop: row.shop_id,
    event: notificationId(row.id),
    attempt: n,
    outcome: kind,
    status: outcome.statusCode,
    error: outcome.error ?? undefined,
    ms: outcome.durationMs,
  };
  // A delivered one is logged at debug: at info, one line per delivery cost 3 to 7 % of deliveries/s.
  // Failures stay at info, where an operator looks for a receiver in trouble.
  if (kind === 'failed') services.log.warn(fields, 'notification failed after its last attempt');
  else if (kind === 'retry') services.log.info(fields, 'notification attempt');
  else services.log.debug(fields, 'notification attempt');
}
