import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { MasterKeys } from './crypto/keyring.js';
import type { Db, Statement } from './db/db.js';
import type { LimitStore } from './limits/store.js';
import type { OutboundNet } from './net/outbound.js';

/** Delays between a failed renewal's attempts, as ISO 8601 durations; null: the platform's rule. */
export interface RetryScheduleSetting {
  failed?: string[];
  error?: string[];
}

/** Local hours in which no charge is attempted, e.g. 20:00 to 08:00. */
export interface QuietHoursSetting {
  start: string;
  end: string;
}

/** How a shop's notifications authenticate (see migration 026). */
export const NOTIFICATION_AUTHS = ['basic', 'signature'] as const;
export type NotificationAuth = (typeof NOTIFICATION_AUTHS)[number];

export interface Shop {
  id: number;
  name: string;
  test: boolean;
  threeDs: boolean;
  emailNotifications: boolean;
  notificationEmail: string | null;
  returnUrl: string | null;
  publicKey: string;
  /** IANA name: billing's day boundaries and the 03:00 retry rule are in this zone. */
  timeZone: string;
  retrySchedule: RetryScheduleSetting | null;
  quietHours: QuietHoursSetting | null;
  /** A test shop's clock runs this far ahead of real time (0 for live shops). */
  clockOffsetMs: number;
  /** The origins that may frame its checkout pages; null: any site (docs/embedding.md). */
  frameOrigins: string[] | null;
  createdAt: Date;
}

/** A shop whose credentials a request carries, and which credential it was. */
export interface Authenticated {
  shop: Shop;
  /** The shop's gateway credential, derived from GATEWAY_TOKEN (another Kopek deployment), not its key. */
  service: boolean;
}

/** What every verb may use, whoever calls it: HTTP routes, pages, the scheduler or tests. */
export interface Services {
  db: Db;
  clock: Clock;
  config: Config;
  /** The master keys (a bare key is a ring of one); see src/crypto/keyring.ts. */
  masterKey: MasterKeys;
  log: FastifyBaseLogger;
  /**
   * Where the limits count (the API's per-shop budgets, the cabinet's sign-in attempts): shared by
   * every instance on PostgreSQL or Redis, this process's memory on the embedded store. Set by
   * compose/services.ts; an app built without it opens the configured one (compose/app.ts).
   */
  limits?: LimitStore;
  /** The resolver and connector of requests shops aim; the system's unless given (tests give theirs). */
  outbound?: OutboundNet;
  /**
   * Makes a shop's notification-signing key pair (PEM); a fresh RSA pair each time unless given.
   * Tests give pairs made once per run: generating one costs a large share of a second.
   */
  signingKeys?: () => { publicKey: string; privateKey: string };
}

/** How far a keyed request got (migration 028); stored in its key's row. */
export const RECOVERY_POINTS = ['started', 'charge_claimed', 'finished'] as const;
export type RecoveryPoint = (typeof RECOVERY_POINTS)[number];

/**
 * What a keyed request records of its work so a retry can resume it: ids only (a subscription's id,
 * a period, an attempt, a test clock's target), never card data.
 */
export type KeyResource = Readonly<Record<string, string | number | boolean | null>>;

/**
 * A request with an Idempotency-Key on a route in the phased mode (http/idempotency/phased.ts): no
 * transaction is held across it, so the verb records its progress itself, in its own batches.
 */
export interface KeyedRequest {
  /** Where an earlier run with this key stopped: 'started' when there was none. */
  readonly point: RecoveryPoint;
  /** What that run recorded with its point; null when nothing. */
  readonly resource: KeyResource | null;
  /**
   * The statement that moves the key to `point` with `resource`, for the verb to run in the batch (or
   * transaction) that does the step, so the step and its recovery point commit together and the key
   * costs no round trip of its own. Only a committed statement moves the key; `point` above stays
   * what the request started from.
   */
  advance(point: RecoveryPoint, resource: KeyResource | null): Statement;
}

/** A verb's context: the services plus the shop it acts for. */
export interface Ctx extends Services {
  shop: Shop;
  /** Set for a keyed request on a route in the phased mode; undefined otherwise. */
  keyed?: KeyedRequest;
}

/**
 * A shop's own clock: a test shop's runs ahead of real time by its offset, so every verb acting for
 * it (creating subscriptions, charging, settling) sees the time its test clock shows; a live shop's
 * is real time.
 */
export function shopClock(clock: Clock, shop: Pick<Shop, 'test' | 'clockOffsetMs'>): Clock {
  const offset = shop.test ? shop.clockOffsetMs : 0;
  if (offset === 0) return clock;
  return { now: () => new Date(clock.now().getTime() + offset) };
}

/** The context of a verb acting for `shop`, on the shop's own clock. */
export function shopCtx(services: Services, shop: Shop): Ctx {
  return { ...services, clock: shopClock(services.clock, shop), shop };
}
