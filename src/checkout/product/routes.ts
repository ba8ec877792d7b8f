import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CardMsg } from '../../cards/index.js';
import type { Services } from '../../context.js';
import type { ApiError, ErrorTree } from '../../core/errors.js';
import { randomToken } from '../../ids.js';
import { CARD_ERROR_FIELDS, type CardErrors, creditCardFromForm } from '../../pages/card-form.js';
import { type PageLang, pageLang } from '../../pages/lang.js';
import { buyerLang } from '../../pages/language-switch.js';
import { hostedProblemPage } from '../../pages/problem.js';
import { sendPage } from '../../pages/render.js';
import { returnUrlWithResult } from '../../pages/return-url.js';
import { allowFormTargets, PageProblem, registerPageScope } from '../../pages/scope.js';
import { type BuyerErrors, buyerFieldOfGatewayKey, buyerFieldsOf, readBuyerFields } from './fields.js';
import { ClosedPage, PayPage, type ProductView, type ResultKind, ResultPage } from './pages.js';
import { findOrder, type OrderRow } from './repository.js';
import {
  chargeOf,
  currentAvailability,
  loadPayableProduct,
  type PayableProduct,
  payProduct,
  settleOrder,
} from './service.js';
import { type ProductTexts, productTexts } from './texts.js';

/**
 * The buyer's side of a product's payment link, at both addresses the product prints:
 * `{base_url}/products/{id}/pay` (pay_url, payment_url) and `{checkout_url}/v2/confirm_order/{id}/{shop_id}`
 * (confirm_url), each with its `/result` page. Public: the buyer has no credentials, the product id
 * is the link. GET shows the page, POST pays (CSRF-protected, one-time order token), then the
 * browser goes (303) to 3-D Secure or to the result page, which continues to the shop.
 */

/** Where a buyer came in: the base address and path of the page, so every link stays on it. */
interface Entry {
  productId: string;
  shopId?: string;
  base: string;
  path: string;
}

type EntryOf = (request: FastifyRequest, services: Services) => Entry;

const payEntry: EntryOf = (request, services) => {
  const { id } = request.params as { id: string };
  return { productId: id, base: services.config.publicUrl, path: `/products/${encodeURIComponent(id)}/pay` };
};

const confirmEntry: EntryOf = (request, services) => {
  const { id, shopId } = request.params as { id: string; shopId: string };
  return {
    productId: id,
    shopId,
    base: services.config.checkoutUrl,
    path: `/v2/confirm_order/${encodeURIComponent(id)}/${encodeURIComponent(shopId)}`,
  };
};

const ORDER_TOKEN = /^[0-9A-Za-z]{32}$/;

const servicesOf = (request: FastifyRequest): Services => ({ ...request.server.services, log: request.log });

async function load(request: FastifyRequest, entry: Entry): Promise<PayableProduct> {
  const p = await loadPayableProduct(servicesOf(request), entry.productId, entry.shopId);
  if (!p) throw new PageProblem(404, 'notFound');
  return p;
}

/** The buyer's choice of language, else the product's. */
const langOf = (request: FastifyRequest, p: PayableProduct) =>
  buyerLang(request, pageLang(p.product.language));

function viewOf(p: PayableProduct): ProductView {
  const { product, shop } = p;
  return {
    name: product.name,
    description: product.description,
    amount: product.amount,
    currency: product.currency,
    shopName: shop.name,
    test: product.test || shop.test,
  };
}

/** The product's return address, else the shop's; null when neither is set. */
const backOf = (p: PayableProduct) => p.product.return_url ?? p.shop.returnUrl ?? null;

function closed(reply: FastifyReply, p: PayableProduct, kind: 'soldOut' | 'expired') {
  return sendPage(
    reply,
    410,
    ClosedPage({ lang: langOf(reply.request, p), product: viewOf(p), kind, back: backOf(p) }),
  );
}

interface FormState {
  body?: Record<string, unknown>;
  errors?: BuyerErrors;
  cardErrors?: CardErrors;
  otherErrors?: string[];
}

function payPage(reply: FastifyReply, p: PayableProduct, status: number, state: FormState = {}) {
  const body = state.body ?? {};
  const text = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : undefined);
  const fields = buyerFieldsOf(p.product.visible_fields);
  const values = Object.fromEntries(fields.map((f) => [f, text(f)]));
  return sendPage(
    reply,
    status,
    PayPage({
      lang: langOf(reply.request, p),
      product: viewOf(p),
      authorization: p.product.transaction_type === 'authorization',
      fields,
      csrfToken: reply.generateCsrf(),
      // A new token for every form shown: a refused attempt's order is finished, the next one is new.
      orderId: randomToken(32),
      values,
      errors: state.errors,
      // The card number and CVC are never written back into the page.
      card: { holder: text('card_holder'), expMonth: text('card_exp_month'), expYear: text('card_exp_year') },
      cardErrors: state.cardErrors,
      otherErrors: state.otherErrors,
    }),
  );
}

/** A card problem in the buyer's words, from the gateway's message. */
function cardMessage(t: ProductTexts, field: string, message: string): string {
  if (message === "can't be blank") return t.errRequired;
  if (field === 'card_number') return message === CardMsg.luhn ? t.errCardNotValid : t.errCardNumber;
  if (field === 'card_cvc') return t.errCvc;
  if (field === 'card_exp_month') return t.errExpMonth;
  if (/expired/i.test(message)) return t.errExpired;
  if (field === 'card_exp_year') return t.errExpYear;
  if (/too long/i.test(message)) return t.errTooLong;
  return t.errForm;
}

function flatten(tree: ErrorTree, prefix = ''): Array<[string, string]> {
  return Object.entries(tree).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return Array.isArray(value) ? value.map((m): [string, string] => [path, m]) : flatten(value, path);
  });
}

/** The gateway's refusal shown on the form, next to the fields it names. */
function gatewayErrors(lang: PageLang, err: ApiError): FormState {
  const t = productTexts(lang);
  const state: Required<Omit<FormState, 'body'>> = { errors: {}, cardErrors: {}, otherErrors: [] };
  for (const [key, message] of flatten(err.errors)) {
    // The card's own problems (an expired card) come as `credit_card.base`: shown at the expiry.
    const card =
      CARD_ERROR_FIELDS[key] ??
      (key === 'credit_card.base' && /expired/i.test(message) ? 'card_exp_year' : undefined);
    const buyer = buyerFieldOfGatewayKey(key);
    if (card) state.cardErrors[card] ??= cardMessage(t, card, message);
    else if (buyer) state.errors[buyer] ??= t.errForm;
    else state.otherErrors.push(lang === 'en' ? `${key.replace(/[._]/g, ' ')} ${message}` : t.errForm);
  }
  return state;
}

function resultUrl(entry: Entry, orderId: string, absolute: boolean): string {
  return `${absolute ? entry.base : ''}${entry.path}/result?order=${orderId}`;
}

/** Where an order's buyer goes next: the 3-D Secure step it waits on, the form again, or its result. */
function sendToOrder(reply: FastifyReply, entry: Entry, order: OrderRow) {
  reply.header('cache-control', 'no-store');
  if (order.state === 'waiting' && order.transaction_status === 'incomplete' && order.redirect_url) {
    // The form's answer leaves for the gateway's 3-D Secure page: form-action must allow it.
    allowFormTargets(reply, [order.redirect_url]);
    return reply.redirect(order.redirect_url, 303);
  }
  if (order.state === 'invalid') return reply.redirect(entry.path, 303);
  return reply.redirect(resultUrl(entry, order.id, false), 303);
}

async function show(request: FastifyRequest, reply: FastifyReply, entry: Entry) {
  const p = await load(request, entry);
  const availability = await currentAvailability(p);
  if (availability !== 'open') return closed(reply, p, availability);
  return payPage(reply, p, 200);
}

async function pay(request: FastifyRequest, reply: FastifyReply, entry: Entry) {
  const p = await load(request, entry);
  const lang = langOf(request, p);
  const body = (request.body ?? {}) as Record<string, unknown>;
  const orderId = body.order;
  if (typeof orderId !== 'string' || !ORDER_TOKEN.test(orderId))
    throw new PageProblem(400, 'badRequest', lang);
  // A reloaded POST or a second click: the first submission's order answers, nothing is charged again.
  const existing = await findOrder(p.ctx.db, p.shop.id, orderId);
  if (existing && existing.product_id !== p.product.id) throw new PageProblem(400, 'badRequest', lang);
  if (existing && existing.state !== 'invalid') return sendToOrder(reply, entry, existing);
  // Sold out or expired before anything is checked: a buyer is not asked to correct a form in vain.
  const availability = await currentAvailability(p);
  if (availability !== 'open') return closed(reply, p, availability);

  const fields = buyerFieldsOf(p.product.visible_fields);
  const buyer = readBuyerFields(fields, body, lang, p.ctx.clock.now());
  if (Object.keys(buyer.errors).length > 0) return payPage(reply, p, 422, { body, errors: buyer.errors });

  const result = await payProduct(p, {
    orderId,
    buyer: buyer.values,
    card: creditCardFromForm(body),
    ip: request.ip,
    returnUrl: resultUrl(entry, orderId, true),
  });
  switch (result.kind) {
    case 'expired':
    case 'soldOut':
      return closed(reply, p, result.kind);
    case 'invalid':
      return payPage(reply, p, 422, { body, ...gatewayErrors(lang, result.errors) });
    case 'order':
      return sendToOrder(reply, entry, result.order);
  }
}

function resultKind(p: PayableProduct, order: OrderRow): ResultKind {
  if (order.state === 'paid')
    return p.product.transaction_type === 'authorization' ? 'authorized' : 'success';
  if (order.state === 'declined') return order.transaction_status === 'error' ? 'error' : 'declined';
  return 'pending';
}

async function result(request: FastifyRequest, reply: FastifyReply, entry: Entry) {
  const p = await load(request, entry);
  const lang = langOf(request, p);
  const orderId = (request.query as Record<string, unknown>).order;
  const found =
    typeof orderId === 'string' && ORDER_TOKEN.test(orderId)
      ? await findOrder(p.ctx.db, p.shop.id, orderId)
      : undefined;
  if (!found || found.product_id !== p.product.id) throw new PageProblem(404, 'notFound', lang);
  const order = await settleOrder(p, found);
  if (order.state === 'invalid' || (order.state === 'waiting' && order.transaction_status === 'incomplete'))
    return sendToOrder(reply, entry, order);

  const charge = await chargeOf(p, order);
  const kind = resultKind(p, order);
  const back = backOf(p);
  const status = charge?.status ?? order.transaction_status;
  const continueUrl =
    kind !== 'pending' && back && charge && status ? returnUrlWithResult(back, charge.uid, status) : null;
  return sendPage(
    reply,
    200,
    ResultPage({
      lang,
      product: viewOf(p),
      kind,
      uid: charge?.uid ?? null,
      card: charge?.credit_card
        ? { brand: charge.credit_card.brand, last_4: charge.credit_card.last_4 }
        : null,
      continueUrl,
      ...(kind === 'pending' ? { refreshUrl: resultUrl(entry, order.id, false) } : {}),
      tryAgainUrl: kind === 'declined' || kind === 'error' ? entry.path : null,
    }),
  );
}

function register(app: FastifyInstance, path: string, entryOf: EntryOf) {
  const options = { config: { public: true }, schema: { hide: true } };
  const withEntry =
    (handler: (request: FastifyRequest, reply: FastifyReply, entry: Entry) => Promise<unknown>) =>
    (request: FastifyRequest, reply: FastifyReply) =>
      handler(request, reply, entryOf(request, servicesOf(request)));
  app.get(path, options, withEntry(show));
  app.post(path, { ...options, preHandler: app.csrfProtection }, withEntry(pay));
  app.get(`${path}/result`, options, withEntry(result));
}

export async function productPayRoutes(app: FastifyInstance): Promise<void> {
  await registerPageScope(app, { problemPage: hostedProblemPage, formLimit: 16_384, buyerLanguage: true });
  register(app, '/products/:id/pay', payEntry);
  register(app, '/v2/confirm_order/:id/:shopId', confirmEntry);
}
