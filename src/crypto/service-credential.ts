import { createHmac } from 'node:crypto';

/**
 * How a Kopek deployment calls a gateway deployment (GATEWAY_URL) for one of its shops.
 *
 * The gateway keeps only a hash of each shop's secret key, so no other process can learn it. Both
 * deployments share GATEWAY_TOKEN instead, and the caller sends HTTP Basic `shop_id:credential` with
 * the credential derived here. The request stays the platform's ordinary Basic request (logs, limits
 * and the shop's own view of its transactions all work per shop), the token itself never crosses the
 * network, and a credential seen by a proxy is one shop's, on the card routes only (routes opt in
 * with `serviceCredential`), never the token. Rotating the token changes every derived credential.
 */
export function gatewayServiceSecret(gatewayToken: string, shopId: number): string {
  return createHmac('sha256', Buffer.from(gatewayToken, 'hex'))
    .update(`kopek-gateway-service-credential:${shopId}`)
    .digest('hex');
}
