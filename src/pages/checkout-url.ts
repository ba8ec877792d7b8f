/** How long a customer has to complete a hosted payment page. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;

/** The address of the hosted payment page of `token` on the checkout deployment at `base`. */
export function checkoutUrl(base: string, token: string): string {
  return `${base}/v2/checkout?token=${encodeURIComponent(token)}`;
}
