import { queryCharge, sendCharge, transactionsByTrackingId } from '../../charging/index.js';
import { type Ctx, type Services, type Shop, shopCtx } from '../../context.js';
import { ApiError } from '../../core/errors.js';
import {
  type ChargeRequest,
  completeThreeDSecure,
  parseCharge,
  type TransactionAnswer,
} from '../../gateway/index.js';
import { isId } from '../../ids.js';
import type { ProductRow } from '../../products/index.js';
import { shopById } from '../../shops/index.js';
import { type BuyerValues, buyerRequestParts } from './fields.js';
import {
  findProductById,
  makeOrder,
  type OrderOutcome,
  type OrderRow,
  type OrderState,
  openOrdersOfProduct,
  settleOrderRow,
} from './repository.js';

/**
 * The verbs of a product's payment page: a buyer pays a product through the gateway's own payment
 * or authorization, as the product's shop, and each attempt is an order (repository.ts) that holds
 * one unit of finite stock from before the charge until the charge has taken money or has surely not.
 */

/** How long a buyer may stay on a 3-D Secure challenge while the unit waits for them. */
export const HOLD_MS = 15 * 60_000;
/**
 * An order with no transaction at the gateway after this long never reached it (the process stopped
 * between taking the unit and charging): its unit is given back. Far beyond any gateway timeout.
 */
export const GRACE_MS = 10 * 60_000;

export interface PayableProduct {
  product: ProductRow;
  shop: Shop;
  ctx: Ctx;
}

/** The product a buyer's link names, with its shop; undefined for unknown ids and a wrong shop. */
export async function loadPayableProduct(
  services: Services,
  productId: string,
  shopId?: string,
): Promise<PayableProduct | undefined> {
  if (!isId('prd', productId)) return undefined;
  const product = await findProductById(services.db, productId);
  if (!product || (shopId !== undefined && String(product.shop_id) !== shopId)) return undefined;
  const shop = await shopById(services.db, product.shop_id);
  if (!shop) return undefined;
  return { product, shop, ctx: shopCtx(services, shop) };
}

export type Availability = 'open' | 'expired' | 'soldOut';

export function availabilityOf(p: PayableProduct): Availability {
  const { product } = p;
  if (!product.immortal && product.expires_at && product.expires_at.getTime() <= p.ctx.clock.now().getTime())
    return 'expired';
  if (!product.infinite && (product.quantity ?? 0) <= 0) return 'soldOut';
  return 'open';
}

/**
 * Whether the product can be paid now. A product that looks sold out first settles its orders still
 * holding units, so a unit held by a declined or abandoned attempt goes back on sale.
 */
export async function currentAvailability(p: PayableProduct): Promise<Availability> {
  const first = availabilityOf(p);
  if (first !== 'soldOut') return first;
  if ((await settleOpenOrders(p)) === 0) return first;
  const fresh = await findProductById(p.ctx.db, p.product.id);
  if (fresh) p.product = fresh;
  return availabilityOf(p);
}

function stateOf(status: string): OrderState {
  if (status === 'successful') return 'paid';
  if (status === 'failed' || status === 'error') return 'declined';
  return 'waiting';
}

function outcomeOf(answer: TransactionAnswer): OrderOutcome {
  return {
    state: stateOf(answer.status),
    uid: answer.uid,
    status: answer.status,
    redirectUrl: answer.redirect_url ?? null,
  };
}

async function findCharge(p: PayableProduct, order: OrderRow): Promise<TransactionAnswer | undefined> {
  if (order.transaction_uid) return queryCharge(p.ctx, order.transaction_uid);
  const [first] = await transactionsByTrackingId(p.ctx, order.id);
  return first;
}

const age = (p: PayableProduct, order: OrderRow) => p.ctx.clock.now().getTime() - order.created_at.getTime();

/**
 * Brings an open order up to date with its charge at the gateway: paid, declined (its unit given
 * back) or still waiting. A 3-D Secure challenge left alone longer than HOLD_MS is failed at the
 * gateway (when it runs in this process), so the buyer cannot complete it after the unit has gone to
 * someone else; an order the gateway never saw is given up after GRACE_MS.
 */
export async function settleOrder(p: PayableProduct, order: OrderRow): Promise<OrderRow> {
  if (order.state !== 'charging' && order.state !== 'waiting') return order;
  const now = p.ctx.clock.now();
  let charge = await findCharge(p, order);
  if (!charge) {
    if (age(p, order) < GRACE_MS) return order;
    return (await settleOrderRow(p.ctx.db, p.shop.id, order.id, none('declined'), now)) ?? order;
  }
  if (charge.status === 'incomplete' && age(p, order) >= HOLD_MS && !p.ctx.config.gatewayRemote) {
    try {
      charge = (await completeThreeDSecure(p.ctx, charge.uid, 'failed')).transaction;
    } catch (err) {
      // The buyer finished the step just now: their result stands.
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err;
      charge = (await findCharge(p, { ...order, transaction_uid: charge.uid })) ?? charge;
    }
  }
  const outcome = outcomeOf(charge);
  if (outcome.state === 'waiting' && order.state === 'waiting' && order.transaction_status === charge.status)
    return order;
  return (await settleOrderRow(p.ctx.db, p.shop.id, order.id, outcome, now)) ?? order;
}

const none = (state: OrderState): OrderOutcome => ({ state, uid: null, status: null, redirectUrl: null });

/** Settles the product's orders still holding units; answers how many ended (and gave a unit back or sold it). */
async function settleOpenOrders(p: PayableProduct): Promise<number> {
  let ended = 0;
  for (const order of await openOrdersOfProduct(p.ctx.db, p.product.id, 50)) {
    const after = await settleOrder(p, order);
    if (after.state !== 'charging' && after.state !== 'waiting') ended++;
  }
  return ended;
}

export interface PayInput {
  /** The form's one-time token: the order's id and the charge's tracking_id. */
  orderId: string;
  buyer: BuyerValues;
  /** The gateway's `credit_card` object (creditCardFromForm). */
  card: Record<string, unknown>;
  /** The buyer's IP address, for the gateway's `customer.ip`. */
  ip: string | undefined;
  /** Where the buyer lands after a 3-D Secure step: the result page of this order. */
  returnUrl: string;
}

export type PayResult =
  | { kind: 'expired' }
  | { kind: 'soldOut' }
  /** The gateway refused the request: field errors keyed as the gateway's (`credit_card.number`). */
  | { kind: 'invalid'; errors: ApiError }
  | { kind: 'order'; order: OrderRow };

function chargeRequest(p: PayableProduct, input: PayInput): ChargeRequest {
  const { product } = p;
  const parts = buyerRequestParts(input.buyer, input.ip);
  return {
    amount: product.amount,
    currency: product.currency,
    description: product.name,
    tracking_id: input.orderId,
    language: product.language,
    return_url: input.returnUrl,
    test: product.test,
    credit_card: input.card,
    customer: parts.customer,
    ...(parts.billingAddress ? { billing_address: parts.billingAddress } : {}),
    // So the shop sees which product was paid, in the transaction and in its notifications.
    additional_data: { product_id: product.id, ...parts.extra },
  };
}

/**
 * A buyer pays the product. The request is checked by the gateway's own rules before any unit is
 * taken; then the order takes a unit (or finds the product sold out, or finds the order a first
 * submission already made: nothing is charged twice) and the card is charged; the order records
 * the answer, giving the unit back unless money was taken or may still be.
 */
export async function payProduct(p: PayableProduct, input: PayInput): Promise<PayResult> {
  const availability = availabilityOf(p);
  if (availability === 'expired') return { kind: 'expired' };
  const request = chargeRequest(p, input);
  try {
    parseCharge(JSON.parse(JSON.stringify(request)), p.ctx.clock.now(), { requireCvc: true });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'validation') return { kind: 'invalid', errors: err };
    throw err;
  }

  const order = {
    id: input.orderId,
    shopId: p.shop.id,
    productId: p.product.id,
    finite: !p.product.infinite,
  };
  let made = await makeOrder(p.ctx.db, order, p.ctx.clock.now());
  if (made === 'soldOut' && (await settleOpenOrders(p)) > 0)
    made = await makeOrder(p.ctx.db, order, p.ctx.clock.now());
  if (made === 'soldOut') return { kind: 'soldOut' };
  if ('exists' in made) return { kind: 'order', order: made.exists };

  // Sent as every charge is (charging/send.ts): outside any transaction, under a gateway key of the
  // order, and whatever happens comes back as an answer, a refusal or an unknown outcome.
  const sent = await sendCharge(p.ctx, request, {
    type: p.product.transaction_type === 'authorization' ? 'authorization' : 'payment',
    idempotencyKey: `kopek-order:${order.id}`,
    owner: { product: p.product.id, order: order.id },
  });
  const now = p.ctx.clock.now();
  if (sent.kind === 'unknown') {
    // Unknown outcome: the unit stays held until a query (by uid, or by the order's tracking id)
    // learns what happened.
    const outcome: OrderOutcome = {
      state: 'waiting',
      uid: sent.uid ?? null,
      status: 'pending',
      redirectUrl: null,
    };
    return {
      kind: 'order',
      order: (await settleOrderRow(p.ctx.db, p.shop.id, order.id, outcome, now)) ?? made.made,
    };
  }
  if (sent.kind === 'refused') {
    // The gateway refused the request: nothing was charged.
    await settleOrderRow(p.ctx.db, p.shop.id, order.id, none('invalid'), now);
    if (sent.error.code === 'validation') return { kind: 'invalid', errors: sent.error };
    throw sent.error;
  }
  const settled = await settleOrderRow(p.ctx.db, p.shop.id, order.id, outcomeOf(sent.answer), now);
  return { kind: 'order', order: settled ?? made.made };
}

/** The charge of a finished or waiting order, as the gateway answers it now. */
export async function chargeOf(p: PayableProduct, order: OrderRow): Promise<TransactionAnswer | undefined> {
  return order.transaction_uid ? queryCharge(p.ctx, order.transaction_uid) : undefined;
}
