import { openCharge, resolveAttempt } from '../charging/index.js';
import { type Ctx, type Services, shopCtx } from '../context.js';
import { shopById } from '../shops/index.js';
import { type SubscriptionRow, subscriptionOfTransaction } from './repository.js';
import { subscriptionSubject } from './subject.js';

const FINAL = new Set(['successful', 'failed', 'error']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An attempt still open (a 3-D Secure step, or a timeout with unknown outcome) is resolved by asking
 * the gateway, never by charging again (charging: resolveAttempt): by uid when known, else by the
 * attempt's tracking id. A final answer moves the subscription as the answer would have; otherwise
 * nothing changes. Also for a subscription cancelled while its charge was open: the money may have
 * moved.
 */
export async function settleOpenCharge(ctx: Ctx, row: SubscriptionRow): Promise<SubscriptionRow> {
  if (!row.card_token) return row;
  const charge = await openCharge(ctx.db, row.id);
  if (!charge) return row;
  const resolved = await resolveAttempt(ctx, subscriptionSubject(ctx, row.id), charge, {
    settles: (status) => FINAL.has(status),
    abandonWhenMissing: false,
  });
  return resolved.kind === 'settled' ? resolved.subject : row;
}

/**
 * After the cardholder finished a 3-D Secure step for transaction `uid`: settles the subscription
 * whose charge it was, if any. Handed to the gateway's 3-D Secure pages by the composition root
 * (they have no shop credentials, and the gateway knows no subscription).
 */
export async function settleSubscriptionOfTransaction(services: Services, uid: string): Promise<void> {
  // The uid comes from a URL: anything but a UUID cannot be a charge (and would upset the uuid column).
  if (!UUID.test(uid)) return;
  const row = await subscriptionOfTransaction(services.db, uid);
  if (!row) return;
  const shop = await shopById(services.db, row.shop_id);
  if (!shop) return;
  await settleOpenCharge(shopCtx(services, shop), row);
}
