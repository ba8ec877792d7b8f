import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { shopCtx } from '../context.js';
import { ApiError } from '../core/errors.js';
import { gatewayErrorBody } from '../gateway/index.js';
import { assetFile } from '../pages/assets.js';
import { shopByPublicKey } from '../shops/index.js';
import { createCtpCheckout } from './api/service.js';

/**
 * Kopek's payment widget for a shop's own page (docs/embedding.md):
 *
 * - `GET {checkout_url}/widget/be_gateway.js`: the script (src/pages/assets/be_gateway.js), the
 *   platform's documented `new BeGateway({...}).createWidget()`. Any site may load it (CORS, so a
 *   `<script integrity=… crossorigin="anonymous">` works); `?v=<version>` is cached for a year,
 *   the bare address for a day.
 * - `GET {checkout_url}/widget/be_gateway.json`: the versioned address and its SRI hash, what a shop
 *   puts in its script tag.
 * - `POST {checkout_url}/widget/checkouts`: the widget's public-key integration: the checkout API's
 *   body with `checkout.public_key` (the shop's public key, GET /shop's `public_key_base64`) instead
 *   of credentials. Any page may ask (CORS, no cookies, no credentials), unless the shop names its
 *   `frame_origins`: then only pages of those origins. The buyer's browser makes the request, so the
 *   buyer may change it: the shop must check amount, currency, test and tracking_id in the signed
 *   notification before it delivers anything.
 */

const SCRIPT = 'be_gateway.js';
const script = assetFile(SCRIPT);
const integrity = `sha384-${createHash('sha384').update(script.body).digest('base64')}`;

const YEAR = 'public, max-age=31536000, immutable';
const DAY = 'public, max-age=86400';

/** The script's versioned address and its Subresource Integrity hash, on the checkout deployment at `base`. */
export function widgetScript(base: string): { src: string; integrity: string } {
  return { src: `${base}/widget/${SCRIPT}?v=${script.hash}`, integrity };
}

function anyOrigin(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*');
  reply.header('vary', 'origin');
}

async function publicKeyCheckout(request: FastifyRequest, reply: FastifyReply) {
  anyOrigin(reply);
  const body = request.body as Record<string, unknown> | undefined;
  const checkout = body?.checkout as Record<string, unknown> | undefined;
  const key = checkout && typeof checkout === 'object' ? checkout.public_key : undefined;
  if (typeof key !== 'string' || key.trim() === '')
    throw ApiError.validation({ checkout: { public_key: ["can't be blank"] } });
  const services = { ...request.server.services, log: request.log };
  const shop = await shopByPublicKey(services.db, key);
  if (!shop) throw ApiError.base('unauthorized', 'Invalid public key');
  const origin = request.headers.origin;
  if (shop.frameOrigins !== null && (typeof origin !== 'string' || !shop.frameOrigins.includes(origin)))
    throw ApiError.base('forbidden', "This page's origin is not one of the shop's frame_origins");
  const created = await createCtpCheckout(shopCtx(services, shop), body, request.headers['x-api-version']);
  request.log.info({ shop: shop.id, checkout: created.token }, 'a checkout was made with the public key');
  return reply.code(201).send({ checkout: created });
}

export const widgetRoutes: FastifyPluginAsync = async (app) => {
  const hidden = { schema: { hide: true } };
  app.get(`/widget/${SCRIPT}`, { ...hidden, config: { public: true } }, async (request, reply) => {
    const version = (request.query as Record<string, unknown>).v;
    anyOrigin(reply);
    return reply
      .header('content-type', script.type)
      .header('cache-control', version === script.hash ? YEAR : DAY)
      .header('x-content-type-options', 'nosniff')
      .header('cross-origin-resource-policy', 'cross-origin')
      .send(script.body);
  });
  app.get('/widget/be_gateway.json', { ...hidden, config: { public: true } }, async (request, reply) => {
    anyOrigin(reply);
    return reply
      .header('cache-control', 'no-cache')
      .send(widgetScript(request.server.services.config.checkoutUrl));
  });
  const config = { public: true, errorEnvelope: gatewayErrorBody };
  app.options('/widget/checkouts', { ...hidden, config }, async (_request, reply) => {
    anyOrigin(reply);
    return reply
      .code(204)
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', 'content-type, x-api-version')
      .header('access-control-max-age', '600')
      .send();
  });
  app.post('/widget/checkouts', { ...hidden, config }, publicKeyCheckout);
};
