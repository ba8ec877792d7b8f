import type { Config } from '../config.js';

/**
 * Where a running Kopek answers, as `kopek serve` prints it. Every address is one this server (or,
 * with GATEWAY_URL, the gateway's) really serves; `{…}` and `…` mark the part that comes from a
 * product, payment or subscription.
 */
export interface BannerLine {
  label: string;
  url: string;
  /** What opens it, for an address with a placeholder. */
  note?: string;
}

export function bannerLines(config: Pick<Config, 'publicUrl' | 'checkoutUrl' | 'gatewayUrl'>): BannerLine[] {
  const { publicUrl, checkoutUrl, gatewayUrl } = config;
  const lines: BannerLine[] = [
    { label: 'API', url: publicUrl, note: 'base address; HTTP Basic shop_id:secret_key' },
    { label: 'Docs', url: `${publicUrl}/docs` },
    { label: 'Health', url: `${publicUrl}/health` },
    { label: 'Payment pages', url: `${publicUrl}/products/{id}/pay`, note: "a product's pay_url" },
    { label: '', url: `${checkoutUrl}/v2/confirm_order/{id}/{shop_id}`, note: "a product's confirm_url" },
    { label: '', url: `${checkoutUrl}/v2/checkout?token=…`, note: "a subscription's redirect_url" },
    { label: '3-D Secure', url: `${gatewayUrl}/process/{uid}`, note: "an incomplete payment's redirect_url" },
    { label: 'Cabinet', url: `${publicUrl}/cabinet`, note: 'sign in with a shop id and secret key' },
  ];
  if (new URL(gatewayUrl).origin !== new URL(publicUrl).origin)
    lines.push({ label: 'Gateway', url: gatewayUrl, note: 'card operations go to this server' });
  return lines;
}

export function bannerText(config: Pick<Config, 'publicUrl' | 'checkoutUrl' | 'gatewayUrl'>): string {
  return bannerLines(config)
    .map(
      ({ label, url, note }) =>
        `  ${`${label}${label ? ':' : ''}`.padEnd(15)}${url}${note ? `  (${note})` : ''}`,
    )
    .join('\n');
}
