import { createPrivateKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Services } from '../context.js';
import { keyringOf, type MasterKeys } from '../crypto/keyring.js';
import { outboundRules } from '../net/outbound.js';
import { openWebhookSecret, shopSecret, signingKeyOf, webhookSecretEnc } from '../shops/index.js';
import { KOPEK_SIGNATURE_HEADER, kopekSignature, sendsBasic } from './kopek-signature.js';
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

/** Shops whose opened keys a process keeps (about 2 KB each); beyond, the least recently used is dropped. */
const KEYS_KEPT = 1000;

/**
 * A bounded map, per keyring (another master key opens nothing of what it holds). Found by the sealed
 * text: re-sealed under a new master key, a value is opened once more and its old entry ages out.
 */
class KeptPerMasterKey<V extends {}> {
  readonly #byMaster = new WeakMap<object, LRUCache<string, V>>();

  get(masterKey: MasterKeys, sealed: string, open: () => V): V {
    const ring = keyringOf(masterKey);
    let kept = this.#byMaster.get(ring);
    if (!kept) {
      kept = new LRUCache({ max: KEYS_KEPT });
      this.#byMaster.set(ring, kept);
    }
    let value = kept.get(sealed);
    if (value === undefined) {
      value = open();
      kept.set(sealed, value);
    }
    return value;
  }
}

const signingKeys = new KeptPerMasterKey<KeyObject>();
const authorizations = new KeptPerMasterKey<string>();
const webhookSecrets = new KeptPerMasterKey<string>();

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

/**
 * The webhook secrets that sign at `at` (the shop's clock), opened once per process and found by
 * their sealed text, so a rotated secret is used from the first claim that reads it: the current
 * one, and for 24 hours after a rotation the one it replaced.
 */
function webhookSecretsAt(masterKey: MasterKeys, row: DueRow, sealed: string, at: Date): string[] {
  const secrets = [webhookSecrets.get(masterKey, sealed, () => openWebhookSecret(masterKey, sealed))];
  const previous = row.webhook_secret_prev_enc;
  const until = row.webhook_secret_prev_until;
  if (previous !== null && until !== null && at.getTime() < until.getTime()) {
    secrets.push(webhookSecrets.get(masterKey, previous, () => openWebhookSecret(masterKey, previous)));
  }
  return secrets;
}

export interface SentHeaders {
  headers: Record<string, string>;
  /** The Kopek-Signature header, kept with the attempt for the cabinet to show. */
  kopekSignature: string;
}

/**
 * The headers of one attempt at `at` (the shop's clock). `webhookSecretSealed` is the shop's sealed
 * webhook secret (the row's, or the one just made for an older shop). Basic goes only where
 * sendsBasic allows it; the Content-Signature and the Kopek-Signature always go.
 */
export async function headersFor(
  services: Services,
  row: DueRow,
  body: string,
  at: Date,
  webhookSecretSealed: string,
): Promise<SentHeaders> {
  // RSA-SHA256 over the exact bytes sent (PKCS #1 v1.5, as createSign('RSA-SHA256') makes it).
  const key = signingKeyObject(services.masterKey, row);
  const t = Math.floor(at.getTime() / 1000);
  const kopek = kopekSignature(t, body, webhookSecretsAt(services.masterKey, row, webhookSecretSealed, at));
  const authorization =
    row.secret_enc === null || !sendsBasic(row.notification_auth, row.url)
      ? undefined
      : authorizationOf(services.masterKey, row, row.secret_enc);
  const signature = await processSigner(services.config.notifySigningThreads).sign(key, body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Kopek-Notifications/1',
    'content-signature': signature,
    [KOPEK_SIGNATURE_HEADER.toLowerCase()]: kopek,
    [EVENT_ID_HEADER.toLowerCase()]: notificationId(row.id),
    [TIMESTAMP_HEADER.toLowerCase()]: String(t),
  };
  // A shop created before Kopek kept its key sealed gets its notifications without Basic until
  // it is given a new key (kopek shop rotate-key).
  if (authorization !== undefined) headers.authorization = authorization;
  return { headers, kopekSignature: kopek };
}

interface Sent {
  outcome: Outcome;
  kopekSignature: string | null;
}

async function send(services: Services, row: DueRow, at: Date, timeoutMs: number): Promise<Sent> {
  let sent: SentHeaders;
  const body = notificationBody(row);
  // A shop older than webhook secrets is given one on its first notification. Outside the catch: a
  // store that fails here leaves the notification leased, and it is tried again.
  const sealed =
    row.webhook_secret_enc ??
    (await webhookSecretEnc(services, { id: row.shop_id, webhook_secret_enc: null }));
  try {
    sent = await headersFor(services, row, body, at, sealed);
  } catch {
    // A master key other than the one the shop's keys were sealed with: nothing can be signed.
    const error = "the shop's keys cannot be opened";
    return { outcome: { statusCode: null, durationMs: 0, response: null, error }, kopekSignature: null };
  }
  const outcome = await postNotification({
    url: row.url,
    body,
    headers: sent.headers,
    rules: outboundRules(services, row.test),
    net: services.outbound,
    timeoutMs,
  });
  return { outcome, kopekSignature: sent.kopekSignature };
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
  const { outcome, kopekSignature } = await send(services, row, at, opts.timeoutMs ?? SEND_TIMEOUT_MS);
  const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  let next: Next = { kind: 'delivered' };
  if (!ok) {
    const delay = retryDelayMs(n - row.series_from, (opts.random ?? Math.random)());
    next =
      delay === undefined
        ? { kind: 'failed' }
        : { kind: 'retry', at: new Date(shopNow(services, row).getTime() + delay) };
  }
  const record = {
    eventId: row.id,
    shopId: row.shop_id,
    n,
    seriesFrom: row.series_from,
    at,
    ...outcome,
    kopekSignature,
  };
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
