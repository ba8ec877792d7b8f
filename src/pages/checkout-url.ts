/** How long a customer has to complete a hosted payment page. */
export const CHECKOUT_TTL_MS = 24 * 60 * 60 * 1000;

/** The address of the hosted payment page of `token` on the checkout deployment at `base`. */
export function checkoutUrl(base: string, token: string): string {
  return `${base}/v2/checkout?token=${encodeURIComponent(token)}`;
}

/**
 * The platform's address of the same page, `{checkout_url}/widget/hpp.html?token=…`: what the checkout
 * API answers as `redirect_url` (the platform's clients and widget libraries expect it). Both
 * addresses show the same page.
 */
export function hostedPageUrl(base: string, token: string): string {
  return `${base}/widget/hpp.html?token=${encodeURIComponent(token)}`;
}
