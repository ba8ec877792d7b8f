import { isoString } from '../../clock.js';
import type { Ctx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import { randomToken } from '../../ids.js';
import { type Announcement, eventInsert } from '../../notifications/index.js';
import { CHECKOUT_TTL_MS, hostedPageUrl } from '../../pages/checkout-url.js';
import { parseCheckout } from './input.js';
import { type CtpRow, EXPIRED_MESSAGE, findCtp, insertCtp } from './repository.js';

/** The platform's checkout API: a hosted page for one payment, authorization or card tokenization. */

export interface CtpView {
  token: string;
  redirect_url: string;
  transaction_type: string;
  attempts: number | null;
  test: boolean;
  version: string | null;
  finished: boolean;
  expired: boolean;
  status: string | null;
  message: string | null;
  order: CtpRow['order'];
  settings: CtpRow['settings'];
  customer: CtpRow['customer'];
  payment_method: CtpRow['payment_method'];
  gateway_response: CtpRow['gateway_response'];
  created_at: string;
  expires_at: string;
}

export function isExpiredUnpaid(row: CtpRow, now: Date): boolean {
  return row.finished_at === null && row.status !== 'incomplete' && row.expires_at.getTime() <= now.getTime();
}

/** The checkout as GET answers it; an unpaid expired one says so as the platform does. */
export function toCtpView(row: CtpRow, checkoutBase: string, now: Date): CtpView {
  const expired = isExpiredUnpaid(row, now);
  return {
    token: row.token,
    redirect_url: hostedPageUrl(checkoutBase, row.token),
    transaction_type: row.transaction_type,
    attempts: row.attempts,
    test: row.test,
    version: row.version,
    finished: row.finished_at !== null,
    expired,
    status: expired ? 'error' : row.status,
    message: expired ? EXPIRED_MESSAGE : row.message,
    order: row.order,
    settings: row.settings,
    customer: row.customer,
    payment_method: row.payment_method,
    gateway_response: row.gateway_response,
    created_at: isoString(row.created_at),
    expires_at: isoString(row.expires_at),
  };
}

export async function createCtpCheckout(
  ctx: Ctx,
  body: unknown,
  versionHeader: unknown,
): Promise<{ token: string; redirect_url: string }> {
  const now = ctx.clock.now();
  const input = parseCheckout(body, versionHeader, now);
  const row = await insertCtp(ctx.db, {
    token: randomToken(40),
    shop_id: ctx.shop.id,
    transaction_type: input.transactionType,
    attempts: input.attempts,
    test: ctx.shop.test || input.test,
    version: input.version,
    order: input.order,
    settings: input.settings,
    customer: input.customer,
    payment_method: input.paymentMethod,
    iframe: input.iframe,
    created_at: now,
    expires_at: input.expiresAt ?? new Date(now.getTime() + CHECKOUT_TTL_MS),
  });
  return { token: row.token, redirect_url: hostedPageUrl(ctx.config.checkoutUrl, row.token) };
}

/** Another shop's checkout is as unknown as one that never existed. */
export async function getCtpCheckout(ctx: Ctx, token: string): Promise<CtpView> {
  const row = await findCtp(ctx.db, token);
  if (!row || row.shop_id !== ctx.shop.id) throw ApiError.notFound('Record not found');
  return toCtpView(row, ctx.config.checkoutUrl, ctx.clock.now());
}

/** The shop's notification that the checkout expired unpaid: its settings.notification_url, platform shape. */
export function ctpExpiryAnnouncement(row: CtpRow, checkoutBase: string, now: Date): Announcement {
  const view = toCtpView(row, checkoutBase, now);
  const event = 'expired.checkout';
  return {
    shopId: row.shop_id,
    resourceType: 'checkout',
    resourceId: row.token,
    event,
    payload: { checkout: { ...view, status: 'error', message: EXPIRED_MESSAGE, expired: true }, event },
    url: row.settings.notification_url,
    now,
  };
}

export { eventInsert };
