import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { MasterKeys } from './crypto/keyring.js';
import type { Db } from './db/db.js';
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
  createdAt: Date;
}

/** What every verb may use, whoever calls it: HTTP routes, pages, the scheduler or tests. */
export interface Services {
  db: Db;
  clock: Clock;
  config: Config;
  /** The master keys (a bare key is a ring of one); see src/crypto/keyring.ts. */
  masterKey: MasterKeys;
  log: FastifyBaseLogger;
  /** The resolver and connector of requests shops aim; the system's unless given (tests give theirs). */
  outbound?: OutboundNet;
  /**
   * Makes a shop's notification-signing key pair (PEM); a fresh RSA pair each time unless given.
   * Tests give pairs made once per run: generating one costs a large share of a second.
   */
  signingKeys?: () => { publicKey: string; privateKey: string };
}

/** A verb's context: the services plus the shop it acts for. */
export interface Ctx extends Services {
  shop: Shop;
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
