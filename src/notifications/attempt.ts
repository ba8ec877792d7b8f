import { createPrivateKey, type KeyObject, sign } from 'node:crypto';
import type { Services } from '../context.js';
import { shopSecret, signingKeyOf } from '../shops/service.js';
import { type Outcome, postNotification } from './post.js';
import { type DueRow, type Next, outcomeStatements } from './queue.js';
import { retryDelayMs } from './retry.js';

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

/** Shops whose parsed signing keys a process keeps (about 2 KB each); beyond, the oldest is dropped. */
const KEYS_KEPT = 1000;

/** Parsed signing keys by sealed key, per master key (another master key opens nothing of these). */
const signingKeys = new WeakMap<Buffer, Map<string, KeyObject>>();

/**
 * The shop's signing key, opened and parsed once per process: parsing the PEM took longer than the
 * signature itself (about 0.55 of 0.85 ms on the 2-core machine). Found by the sealed text, so a shop
 * given a new key (sealed anew) is never signed for with its old one.
 */
function signingKeyObject(masterKey: Buffer, row: Pick<DueRow, 'private_key_enc'>): KeyObject {
  let kept = signingKeys.get(masterKey);
  if (!kept) {
    kept = new Map();
    signingKeys.set(masterKey, kept);
  }
  let key = kept.get(row.private_key_enc);
  if (key === undefined) {
    key = createPrivateKey(signingKeyOf(masterKey, row));
    if (kept.size >= KEYS_KEPT) {
      const oldest = kept.keys().next().value;
      if (oldest !== undefined) kept.delete(oldest);
    }
    kept.set(row.private_key_enc, key);
  }
  return key;
}

function headersFor(services: Services, row: DueRow, body: string, at: Date): Record<string, string> {
  // RSA-SHA256 over the exact bytes sent (PKCS #1 v1.5, as createSign('RSA-SHA256') makes it).
  const signature = sign('sha256', Buffer.from(body), signingKeyObject(services.masterKey, row)).toString(
    'base64',
  );
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Kopek-Notifications/1',
    'content-signature': signature,
    [EVENT_ID_HEADER.toLowerCase()]: notificationId(row.id),
    [TIMESTAMP_HEADER.toLowerCase()]: String(Math.floor(at.getTime() / 1000)),
  };
  // A shop created before Kopek kept its key sealed gets its notifications without Basic until
  // it is given a new key (kopek shop rotate-key).
  const secret = shopSecret(services.masterKey, row);
  if (secret !== undefined)
    headers.authorization = `Basic ${Buffer.from(`${row.shop_id}:${secret}`).toString('base64')}`;
  return headers;
}

async function send(services: Services, row: DueRow, at: Date, timeoutMs: number): Promise<Outcome> {
  let headers: Record<string, string>;
  const body = notificationBody(row);
  try {
    headers = headersFor(services, row, body, at);
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
  // The lease took this attempt's number: attempts was one less when the row was read.
  const n = row.attempts + 1;
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
  await services.db.batch(outcomeStatements(record, next));
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
  if (kind === 'failed') services.log.warn(fields, 'notification failed after its last attempt');
  else services.log.info(fields, 'notification attempt');
}
