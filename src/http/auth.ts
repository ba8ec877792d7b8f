import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticated, Shop } from '../context.js';
import { ApiError } from '../core/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes open without credentials: health, docs, metrics, hosted pages. */
    public?: boolean;
    /** Card routes a deployment may call for a shop with the credential derived from GATEWAY_TOKEN. */
    serviceCredential?: boolean;
  }
  interface FastifyRequest {
    shop: Shop | undefined;
    /**
     * Made with the credential derived from GATEWAY_TOKEN: another Kopek deployment calling for the
     * shop (the API deployment, for a request it has counted already).
     */
    serviceCall: boolean;
  }
}

/** Who a request's credentials belong to (the shops feature's ShopAuthenticator). */
export interface Authenticator {
  authenticate(
    user: string,
    password: string,
    serviceCredential?: boolean,
  ): Promise<Authenticated | undefined>;
}

/** The app's authenticator, which caches shops: a change to a shop's row makes it forget that shop. */
export interface ShopCache extends Authenticator {
  forget(shopId: number): void;
}

function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** HTTP Basic `shop_id:secret_key` on every route not marked public; 401 with WWW-Authenticate otherwise. */
export function registerAuth(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('shop', undefined);
  app.decorateRequest('serviceCall', false);
  app.addHook('onRequest', async (request) => {
    if (request.is404 || request.routeOptions.config?.public) return;
    const creds = parseBasic(request.headers.authorization);
    if (!creds)
      throw ApiError.base(
        'unauthorized',
        'Authentication required: use HTTP Basic with shop id and secret key',
      );
    const found = await authenticator.authenticate(
      creds.user,
      creds.password,
      request.routeOptions.config?.serviceCredential === true,
    );
    if (!found) throw ApiError.base('unauthorized', 'Invalid shop id or secret key');
    request.shop = found.shop;
    request.serviceCall = found.service;
  });
}

/** The authenticated shop of a request on a non-public route. */
export function shopOf(request: FastifyRequest): Shop {
  if (!request.shop) throw ApiError.base('unauthorized', 'Authentication required');
  return request.shop;
}
