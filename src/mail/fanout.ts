import { type Services, type Shop, shopClock } from '../context.js';
import type { Tx } from '../db/db.js';
import { newId } from '../ids.js';
import { shopsByIds } from '../shops/index.js';
import { chargedSubscription, type Draft, draftsFor, type OutboxEvent } from './compose.js';
import { renderHtml } from './html.js';
import { renderText } from './render.js';
import {
  announcedSubscription,
  insertEmail,
  lockUnmailedEvents,
  markEventsMailed,
  type NewEmail,
} from './repository.js';

/**
 * The fan-out: turns each event of the outbox into the e-mails it calls for, exactly once. Events
 * are claimed in batches (SKIP LOCKED), their e-mails written and the events marked in the same
 * transaction, so a crash leaves the batch to be done again whole; and an e-mail is unique per
 * shop, kind and subject, so two events telling the same thing make one e-mail. No network here:
 * e-mails are only written, sent later by the sender (or kept, without SMTP_URL).
 */

export interface FanOutOptions {
  /** Only this shop's events (tests and a test clock's advance). */
  shopId?: number;
  batchSize?: number;
}

/** Fans out every waiting event; returns how many e-mails were written. */
export async function fanOutEvents(services: Services, opts: FanOutOptions = {}): Promise<number> {
  let written = 0;
  for (;;) {
    const n = await services.db.tx((tx) => fanOutBatch(tx, services, opts));
    if (n === undefined) return written;
    written += n;
  }
}

async function fanOutBatch(tx: Tx, services: Services, opts: FanOutOptions): Promise<number | undefined> {
  const events = await lockUnmailedEvents(tx, opts.batchSize ?? 100, opts.shopId);
  if (events.length === 0) return undefined;
  const shops = await shopsByIds(tx, [...new Set(events.map((e) => e.shop_id))]);
  let written = 0;
  for (const e of events) {
    const shop = shops.get(e.shop_id);
    // The shop's settings now, not when the event happened: turning e-mail off stops what waits.
    if (!shop?.emailNotifications) continue;
    for (const draft of await draftsOf(tx, services, e, shop)) {
      if (await insertEmail(tx, newEmail(services, e, shop, draft))) written++;
    }
  }
  await markEventsMailed(
    tx,
    events.map((e) => e.id),
  );
  return written;
}

async function draftsOf(tx: Tx, services: Services, e: OutboxEvent, shop: Shop): Promise<Draft[]> {
  try {
    const subscriptionId = chargedSubscription(e);
    const subscription = subscriptionId
      ? await announcedSubscription(tx, e.shop_id, subscriptionId, e.id)
      : undefined;
    return draftsFor(e, shop, subscription);
  } catch (err) {
    // One event that cannot be read must not hold up every e-mail after it.
    services.log.error({ err, eventId: e.id }, 'e-mail fan-out skipped an event it could not read');
    return [];
  }
}

function newEmail(services: Services, e: OutboxEvent, shop: Shop, d: Draft): NewEmail {
  const now = shopClock(services.clock, shop).now();
  // Without an SMTP server nothing is sent: the e-mail is kept for the shop to read.
  const send = services.config.smtpUrl !== undefined;
  return {
    id: newId('eml'),
    shopId: shop.id,
    eventId: e.id,
    kind: d.kind,
    about: d.about,
    to: d.to,
    subject: d.message.subject,
    text: renderText(d.message),
    html: renderHtml(d.message),
    language: d.message.language,
    status: send ? 'pending' : 'kept',
    nextAttemptAt: send ? now : null,
    createdAt: now,
  };
}
